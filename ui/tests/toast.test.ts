import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { tick } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

import App from '../src/App.svelte';
import Toast from '../src/components/Toast.svelte';
import { installFakeBackend } from '../src/dev/fakeBackend';
import { handleRefusals } from '../src/lib/api';
import { staff } from '../src/lib/staff.svelte';
import { TOAST_ACTION_MS, TOAST_MS, toast } from '../src/lib/toast.svelte';

describe('Toast', () => {
  afterEach(() => {
    toast.dismiss();
    vi.useRealTimers();
  });

  it('an action is a button reached with Tab and pressed with Enter, once', async () => {
    const run = vi.fn();
    render(Toast);
    toast.show('Order #12 completed', { label: 'Undo', run });
    await userEvent.tab();
    const undo = await screen.findByRole('button', { name: 'Undo' });
    expect(undo).toHaveFocus();
    await userEvent.keyboard('{Enter}');
    expect(run).toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId('toast')).not.toBeInTheDocument();
  });

  it('a message with an action stays longer, and while the focus is on it', () => {
    vi.useFakeTimers();
    toast.show('Order #12 placed');
    vi.advanceTimersByTime(TOAST_MS);
    expect(toast.message).toBeNull();

    toast.show('Order #12 completed', { label: 'Undo', run: () => {} });
    vi.advanceTimersByTime(TOAST_MS);
    expect(toast.message).toBe('Order #12 completed');
    toast.hold();
    vi.advanceTimersByTime(TOAST_ACTION_MS * 2);
    expect(toast.message).toBe('Order #12 completed');
    toast.release();
    vi.advanceTimersByTime(TOAST_ACTION_MS);
    expect(toast.message).toBeNull();
    expect(toast.action).toBeNull();
  });
});

describe('Toast over a locked till', () => {
  afterEach(() => {
    staff.serving = null;
    staff.switching = false;
    handleRefusals(null);
  });

  it('the lock clears the message, none shows over the sign-in, and none comes back after it', async () => {
    installFakeBackend(0);
    render(App);
    await screen.findByTestId('pet-row-2');
    await waitFor(() => expect(staff.serving?.staff?.name).toBe('Ana'));
    const undo = vi.fn();
    toast.show('Order #12 placed', { label: 'Undo', run: undo });
    expect(await screen.findByTestId('toast')).toHaveTextContent('Order #12 placed');

    await staff.lock();
    await screen.findByTestId('sign-in');
    expect(screen.queryByTestId('toast')).not.toBeInTheDocument();
    expect(toast.message).toBeNull();

    // An action that finishes behind the lock says nothing over it.
    toast.show('Pet Rex saved');
    await tick();
    expect(screen.queryByTestId('toast')).not.toBeInTheDocument();
    expect(toast.message).toBeNull();

    // Bea signs in: nothing of Ana's is there, and her Undo never ran.
    await staff.signIn(3, '1234');
    await waitFor(() => expect(screen.queryByTestId('sign-in')).not.toBeInTheDocument());
    expect(screen.queryByTestId('toast')).not.toBeInTheDocument();
    expect(undo).not.toHaveBeenCalled();
  });

  it('opening the sign-in to switch people clears the message too', async () => {
    installFakeBackend(0);
    render(App);
    await screen.findByTestId('pet-row-2');
    await waitFor(() => expect(staff.serving?.staff?.name).toBe('Ana'));
    toast.show('Order #12 completed', { label: 'Undo', run: () => {} });
    await screen.findByTestId('toast');
    staff.switching = true;
    await screen.findByTestId('sign-in');
    expect(screen.queryByTestId('toast')).not.toBeInTheDocument();
    expect(toast.message).toBeNull();
  });
});

import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import Toast from '../src/components/Toast.svelte';
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

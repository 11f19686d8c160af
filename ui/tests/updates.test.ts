import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';

import { mockBackend, reject } from '../src/dev/mockBackend';
import UpdatesPanel from '../src/screens/settings/UpdatesPanel.svelte';

const ADDRESS = 'https://updates.example.com/petstore/latest.json';
const settings = (address: string | null, canInstall = true) => ({ address, canInstall, currentVersion: '1.0.0' });

describe('UpdatesPanel', () => {
  it('is off until an address is saved; a refused address says why', async () => {
    const backend = mockBackend({
      get_update_settings: () => settings(null),
      save_update_address: ({ address }) =>
        address.startsWith('http://')
          ? reject('validation_failed', 'updates must come over https://', 400)()
          : settings(address),
    });
    render(UpdatesPanel);
    expect(await screen.findByText('You have Petstore 1.0.0.')).toBeInTheDocument();
    expect(screen.getByTestId('check-for-update')).toBeDisabled();
    await fireEvent.input(screen.getByTestId('update-address'), { target: { value: 'http://updates.lan/latest.json' } });
    await fireEvent.click(screen.getByTestId('save-update-address'));
    expect(await screen.findByRole('alert')).toHaveTextContent('updates must come over https://');
    await fireEvent.input(screen.getByTestId('update-address'), { target: { value: ADDRESS } });
    await fireEvent.click(screen.getByTestId('save-update-address'));
    await expect.poll(() => screen.getByTestId('check-for-update')).not.toBeDisabled();
    expect(backend.argsOf('save_update_address').at(-1)).toEqual({ address: ADDRESS });
  });

  it('shows what is new before anything is installed, and installs only when asked', async () => {
    const backend = mockBackend({
      get_update_settings: () => settings(ADDRESS),
      check_for_update: () => ({
        version: '1.1.0',
        currentVersion: '1.0.0',
        notes: 'Receipts show the shop address.',
        published: '2026-11-24T10:00:00Z',
      }),
      install_update: () => null,
    });
    render(UpdatesPanel);
    await expect.poll(() => screen.getByTestId('check-for-update')).not.toBeDisabled();
    await fireEvent.click(screen.getByTestId('check-for-update'));
    expect(await screen.findByTestId('update-offer')).toHaveTextContent('Petstore 1.1.0 is available');
    expect(screen.getByTestId('update-notes')).toHaveTextContent('Receipts show the shop address.');
    expect(backend.countOf('install_update')).toBe(0);
    await fireEvent.click(screen.getByTestId('install-update'));
    expect(backend.countOf('install_update')).toBe(1);
  });

  it('says when this is the latest, and when this build cannot install updates', async () => {
    mockBackend({ get_update_settings: () => settings(ADDRESS, false), check_for_update: () => null });
    render(UpdatesPanel);
    expect(await screen.findByTestId('updates-no-key')).toHaveTextContent('cannot install updates');
    await expect.poll(() => screen.getByTestId('check-for-update')).not.toBeDisabled();
    await fireEvent.click(screen.getByTestId('check-for-update'));
    expect(await screen.findByTestId('update-none')).toHaveTextContent('This is the latest Petstore.');
  });
});

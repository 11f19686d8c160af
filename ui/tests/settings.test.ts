import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { localStatus, settingsView, shopSettings } from '../src/dev/fixtures';
import { mockBackend, type Handler } from '../src/dev/mockBackend';
import type { SettingsView } from '../src/lib/bindings/SettingsView';
import { navigation } from '../src/lib/navigation.svelte';
import { shortcuts, wantNewPet } from '../src/lib/shortcuts.svelte';
import { toast } from '../src/lib/toast.svelte';
import SettingsScreen from '../src/screens/SettingsScreen.svelte';

const REMOTE = settingsView({ hasRemoteKey: true, backend: 'remote', baseUrl: 'http://shop-server.lan:8787' });

function backend(view: SettingsView = REMOTE, more: Record<string, Handler> = {}) {
  return mockBackend({
    get_settings: () => view,
    save_settings: ({ settings }) => ({
      ...settings,
      remoteKey: undefined,
      hasRemoteKey: settings.remoteKey !== '',
      remoteKeyStorage: view.remoteKeyStorage,
      keyringError: view.keyringError,
    }),
    test_connection: () => ({ ok: false, message: 'Could not connect: connection refused' }),
    get_status: () => localStatus(),
    get_local_api_key: () => 'local-secret-key-123',
    regenerate_local_api_key: () => 'fresh-key-456',
    list_api_keys: () => [],
    get_shop_settings: () => shopSettings(),
    ...more,
  });
}

describe('Settings screen', () => {
  it('never shows the saved remote key: the field is blank, masked, and says it is kept', async () => {
    backend();
    render(SettingsScreen);
    const key = await screen.findByTestId('remote-key');
    expect(key).toHaveAttribute('type', 'password');
    expect(key).toHaveValue('');
    expect(key).toHaveAttribute('placeholder', 'saved — leave blank to keep');
    expect(screen.getByTestId('base-url')).toHaveValue('http://shop-server.lan:8787');
    expect(screen.getByTestId('backend-remote')).toBeChecked();
  });

  it('sends remoteKey null when the key is left blank, and the typed key otherwise', async () => {
    const b = backend();
    render(SettingsScreen);
    await userEvent.click(await screen.findByTestId('save-settings'));
    await waitFor(() => expect(b.argsOf('save_settings')).toHaveLength(1));
    expect(b.argsOf('save_settings')[0]).toEqual({
      settings: {
        backend: 'remote',
        baseUrl: 'http://shop-server.lan:8787',
        remoteKey: null,
        localApi: { enabled: true, port: 8787 },
      },
    });
    await userEvent.type(screen.getByTestId('remote-key'), 'new-key{Enter}');
    await waitFor(() => expect(b.argsOf('save_settings')).toHaveLength(2));
    expect(b.argsOf('save_settings')[1].settings.remoteKey).toBe('new-key');
    // After saving, the field is blank again: the key is not kept in the page.
    await waitFor(() => expect(screen.getByTestId('remote-key')).toHaveValue(''));
  });

  it('says where the remote key is kept: the keyring, or a file with a warning and why', async () => {
    backend();
    const keyring = render(SettingsScreen);
    expect(await screen.findByTestId('remote-key-storage')).toHaveTextContent(
      "Saved in this computer's password store (the system keyring).",
    );
    expect(screen.getByTestId('remote-key-storage')).not.toHaveClass('warn');
    keyring.unmount();

    backend({ ...REMOTE, remoteKeyStorage: 'file' });
    const file = render(SettingsScreen);
    const note = await screen.findByTestId('remote-key-storage');
    expect(note).toHaveTextContent(
      'This computer has no password store (keyring), so the key is saved in a file that only your user account can open.',
    );
    expect(note).toHaveClass('warn');
    file.unmount();

    backend({ ...REMOTE, remoteKeyStorage: 'file', keyringError: 'Cannot create an item in a locked collection' });
    render(SettingsScreen);
    const refused = await screen.findByTestId('remote-key-storage');
    expect(refused).toHaveTextContent(
      "This computer's password store (keyring) would not take the key, so it is saved in a file that only your user account can open.",
    );
    expect(refused).toHaveTextContent('The password store said: Cannot create an item in a locked collection');
    expect(refused).toHaveClass('warn');
  });

  it('in local mode a saved remote key can be forgotten (remoteKey ""), and is kept otherwise', async () => {
    const b = backend({ ...REMOTE, backend: 'local', remoteKeyStorage: 'file' });
    render(SettingsScreen);
    const forget = await screen.findByTestId('forget-remote-key');
    expect(forget).not.toBeChecked();
    expect(screen.getByTestId('remote-key-storage')).toHaveTextContent('no password store (keyring)');
    await userEvent.click(screen.getByTestId('save-settings'));
    await waitFor(() => expect(b.argsOf('save_settings')).toHaveLength(1));
    expect(b.argsOf('save_settings')[0].settings.remoteKey).toBeNull();

    await userEvent.click(screen.getByTestId('forget-remote-key'));
    await userEvent.click(screen.getByTestId('save-settings'));
    await waitFor(() => expect(b.argsOf('save_settings')).toHaveLength(2));
    expect(b.argsOf('save_settings')[1].settings.remoteKey).toBe('');
    // Forgotten: nothing left to forget.
    await waitFor(() => expect(screen.queryByTestId('forget-remote-key')).not.toBeInTheDocument());

    // Without a saved key there is nothing to forget.
    await userEvent.click(screen.getByTestId('backend-remote'));
    await userEvent.click(screen.getByTestId('backend-local'));
    expect(screen.queryByTestId('forget-remote-key')).not.toBeInTheDocument();
  });

  it('saving refreshes the status bar data', async () => {
    const b = backend();
    render(SettingsScreen);
    const port = await screen.findByTestId('local-api-port');
    await userEvent.clear(port);
    await userEvent.type(port, '9090');
    await userEvent.click(screen.getByTestId('save-settings'));
    await waitFor(() => expect(b.countOf('get_status')).toBeGreaterThan(0));
    expect(b.argsOf('save_settings')[0].settings.localApi).toEqual({ enabled: true, port: 9090 });
  });

  it('shows the test-connection report', async () => {
    const b = backend();
    render(SettingsScreen);
    await userEvent.click(await screen.findByTestId('test-connection'));
    expect(await screen.findByTestId('connection-report')).toHaveTextContent('Could not connect: connection refused');
    expect(b.argsOf('test_connection')).toEqual([{ baseUrl: 'http://shop-server.lan:8787', remoteKey: null }]);
  });

  it('remote fields appear only for the remote backend', async () => {
    backend({ ...REMOTE, backend: 'local', hasRemoteKey: false });
    render(SettingsScreen);
    await screen.findByTestId('save-settings');
    expect(screen.queryByTestId('base-url')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('backend-remote'));
    expect(screen.getByTestId('remote-key')).toHaveAttribute('placeholder', "the server's API key");
  });

  it('the local key is masked until Show, copied with Copy, and regenerated after confirmation', async () => {
    const b = backend();
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    render(SettingsScreen);
    const key = await screen.findByTestId('local-api-key');
    expect(key).not.toHaveTextContent('local-secret-key-123');
    expect(b.countOf('get_local_api_key')).toBe(0);
    await userEvent.click(screen.getByTestId('show-key'));
    await waitFor(() => expect(key).toHaveTextContent('local-secret-key-123'));
    await userEvent.click(screen.getByTestId('copy-key'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('local-secret-key-123'));
    await userEvent.click(screen.getByTestId('regenerate-key'));
    expect(b.countOf('regenerate_local_api_key')).toBe(0);
    await userEvent.click(screen.getByTestId('confirm'));
    await waitFor(() => expect(key).toHaveTextContent('fresh-key-456'));
    expect(screen.getByText(/Authorization: Bearer <key>/)).toBeInTheDocument();
    expect(screen.getByTestId('local-api-docs')).toHaveTextContent('http://127.0.0.1:8787/docs');
  });

  it('says where the key is kept only once one is saved', async () => {
    backend({ ...REMOTE, hasRemoteKey: false, remoteKeyStorage: 'file' });
    render(SettingsScreen);
    await userEvent.type(await screen.findByTestId('remote-key'), 'new-key');
    expect(screen.queryByTestId('remote-key-storage')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('save-settings'));
    expect(await screen.findByTestId('remote-key-storage')).toHaveTextContent('no password store (keyring)');
  });

  it('an address without http:// or https:// is refused in plain words, before the app is asked', async () => {
    const b = backend();
    render(SettingsScreen);
    const url = await screen.findByTestId('base-url');
    await userEvent.clear(url);
    await userEvent.type(url, '192.168.1.20:8080');
    await userEvent.click(screen.getByTestId('save-settings'));
    // Said beside the address, which gets the focus.
    expect(await screen.findByTestId('base-url-error')).toHaveTextContent(
      'Start the address with http:// or https://, like http://192.168.1.20:8080',
    );
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(url).toHaveFocus();
    expect(b.countOf('save_settings')).toBe(0);
    await userEvent.click(screen.getByTestId('test-connection'));
    expect(await screen.findByTestId('connection-report')).toHaveTextContent(
      'Start the address with http:// or https://, like http://192.168.1.20:8080',
    );
    expect(b.countOf('test_connection')).toBe(0);
  });

  it('saving a remote that does not answer says so instead of "Settings saved", and clears an old test report', async () => {
    const down = localStatus({ backend: 'remote', target: 'http://shop-server.lan:8787', reachable: false, message: 'connection refused' });
    backend(REMOTE, { get_status: () => down });
    render(SettingsScreen);
    await userEvent.click(await screen.findByTestId('test-connection'));
    await screen.findByTestId('connection-report');
    await userEvent.click(screen.getByTestId('save-settings'));
    const note = await screen.findByTestId('saved-unreachable');
    expect(note).toHaveTextContent('Saved, but the server at http://shop-server.lan:8787 does not answer (connection refused)');
    expect(toast.message).not.toBe('Settings saved');
    expect(screen.queryByTestId('connection-report')).not.toBeInTheDocument();
  });

  it('saving a remote that answers says "Settings saved"', async () => {
    const up = localStatus({ backend: 'remote', target: 'http://shop-server.lan:8787' });
    backend(REMOTE, { get_status: () => up });
    render(SettingsScreen);
    await userEvent.click(await screen.findByTestId('save-settings'));
    await waitFor(() => expect(toast.message).toBe('Settings saved'));
    expect(screen.queryByTestId('saved-unreachable')).not.toBeInTheDocument();
  });

  it('leaving with unsaved changes asks first; Stay keeps them, Leave goes', async () => {
    window.location.hash = '#settings';
    navigation.screen = 'settings';
    backend();
    render(SettingsScreen);
    const port = await screen.findByTestId('local-api-port');

    // Nothing changed: nothing to ask.
    window.location.hash = '#pets';
    await new Promise((r) => setTimeout(r, 20));
    expect(screen.queryByTestId('leave-settings-dialog')).not.toBeInTheDocument();
    window.location.hash = '#settings';
    await new Promise((r) => setTimeout(r, 20));

    await userEvent.clear(port);
    await userEvent.type(port, '9090');
    // The hash changed some other way (Back): put back, and asked.
    window.location.hash = '#orders';
    expect(await screen.findByTestId('leave-settings-dialog')).toHaveTextContent("You changed this till's settings");
    expect(window.location.hash).toBe('#settings');
    expect(navigation.screen).toBe('settings');
    await userEvent.click(screen.getByTestId('leave-stay'));
    expect(screen.queryByTestId('leave-settings-dialog')).not.toBeInTheDocument();
    expect(port).toHaveValue(9090);

    // Ctrl+N asks the same; staying drops the new pet it wanted, so Pets, opened later,
    // does not open its form out of the blue.
    wantNewPet();
    await userEvent.click(await screen.findByTestId('leave-stay'));
    expect(window.location.hash).toBe('#settings');
    expect(shortcuts.newPetWanted).toBe(false);

    // A link to another screen is held before it changes anything.
    const link = document.createElement('a');
    link.href = '#inventory';
    link.textContent = 'Inventory';
    document.body.append(link);
    try {
      await userEvent.click(link);
      expect(await screen.findByTestId('leave-settings-dialog')).toBeInTheDocument();
      expect(window.location.hash).toBe('#settings');
      await userEvent.click(screen.getByTestId('leave-discard'));
      await waitFor(() => expect(window.location.hash).toBe('#inventory'));
    } finally {
      link.remove();
    }
  });

  it('the API reference opens in the browser, and its address can be copied', async () => {
    const opened = vi.fn(() => null);
    backend(REMOTE, { open_api_docs: opened });
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const { status } = await import('../src/lib/status.svelte');
    render(SettingsScreen);
    await status.refresh();
    await userEvent.click(await screen.findByTestId('open-docs'));
    expect(opened).toHaveBeenCalledTimes(1);
    await userEvent.click(await screen.findByTestId('copy-docs-address'));
    expect(writeText).toHaveBeenCalledWith('http://127.0.0.1:8787/docs');
    expect(toast.message).toMatch(/copied/);
  });
});

// Quitting, or switching to local mode, with writes the server does not have yet asks
// first; staying is the default.
import { emit } from '@tauri-apps/api/event';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import App from '../src/App.svelte';
import { localStatus, paged, settingsView } from '../src/dev/fixtures';
import { mockBackend } from './petsBackend';
import type { SyncStatus } from '../src/lib/bindings/SyncStatus';
import { sync, unsentText } from '../src/lib/sync.svelte';
import SettingsScreen from '../src/screens/SettingsScreen.svelte';

const REMOTE = settingsView({ hasRemoteKey: true, backend: 'remote', baseUrl: 'http://shop-server.lan:8787' });

function syncing(pending: number, attention: number): SyncStatus {
  return { state: 'synced', outbox: { pending, attention }, position: 42 } as SyncStatus;
}

describe('Leaving writes in the outbox', () => {
  afterEach(() => {
    sync.current = null;
  });

  it('says how many writes the server does not have and where they go', () => {
    expect(unsentText({ pending: 3, attention: 1 }, 'en-US')).toBe(
      '4 sales or stock changes have not reached the server yet (1 needs attention). ' +
        'They stay saved on this till and are sent when Petstore runs in remote mode with this server again and it answers.',
    );
    expect(unsentText({ pending: 1, attention: 0 }, 'en-US')).toMatch(/^1 sale or stock change has not reached the server yet\. /);
  });

  it('asks before quitting when the app holds the close, and quits only when told', async () => {
    const b = mockBackend({
      list_pets: () => paged([]),
      list_categories: () => paged([]),
      get_status: () => localStatus({ backend: 'remote', target: 'http://shop-server.lan:8787' }),
      get_sync_status: () => syncing(2, 0),
      quit_app: () => null,
      keep_app_open: () => null,
    });
    render(App);
    await waitFor(() => expect(b.countOf('get_sync_status')).toBeGreaterThan(0));
    await emit('petstore://quit-requested', { pending: 2, attention: 0 });
    const text = await screen.findByTestId('leave-outbox-text');
    expect(text).toHaveTextContent('2 sales or stock changes have not reached the server yet.');
    // Staying is the default: the focused button, and Escape.
    expect(screen.getByTestId('leave-outbox-stay')).toHaveFocus();
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByTestId('leave-outbox-dialog')).not.toBeInTheDocument());
    expect(b.countOf('keep_app_open')).toBe(1);
    expect(b.countOf('quit_app')).toBe(0);

    await emit('petstore://quit-requested', { pending: 2, attention: 0 });
    await userEvent.click(await screen.findByTestId('leave-outbox-leave'));
    await waitFor(() => expect(b.countOf('quit_app')).toBe(1));
  });

  it('asks before switching to local mode with writes in the outbox', async () => {
    const b = mockBackend({
      get_settings: () => REMOTE,
      save_settings: ({ settings }) => ({ ...REMOTE, ...settings, remoteKey: undefined }),
      get_status: () => localStatus(),
      get_local_api_key: () => 'local-secret-key-123',
      list_api_keys: () => [],
    });
    sync.current = syncing(1, 1);
    render(SettingsScreen);
    await userEvent.click(await screen.findByTestId('backend-local'));
    await userEvent.click(screen.getByTestId('save-settings'));
    expect(await screen.findByTestId('leave-outbox-text')).toHaveTextContent('(1 needs attention)');
    await userEvent.click(screen.getByTestId('leave-outbox-stay'));
    expect(b.countOf('save_settings')).toBe(0);

    await userEvent.click(screen.getByTestId('save-settings'));
    await userEvent.click(await screen.findByTestId('leave-outbox-leave'));
    await waitFor(() => expect(b.argsOf('save_settings')).toHaveLength(1));
    expect(b.argsOf('save_settings')[0].settings.backend).toBe('local');
  });
});

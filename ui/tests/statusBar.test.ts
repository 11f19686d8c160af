import { render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

import StatusBar from '../src/components/StatusBar.svelte';
import { localStatus } from '../src/dev/fixtures';
import { mockBackend } from '../src/dev/mockBackend';
import { status } from '../src/lib/status.svelte';

describe('Status bar', () => {
  afterEach(() => vi.useRealTimers());

  it('shows the backend, reachability and the local API address', async () => {
    mockBackend({ get_status: () => localStatus() });
    render(StatusBar);
    await status.refresh();
    expect(await screen.findByTestId('status-backend')).toHaveTextContent('Local database · /data/petstore.db');
    expect(screen.getByTestId('status-reachable')).toHaveTextContent('Reachable');
    expect(screen.getByTestId('status-local-api')).toHaveTextContent('http://127.0.0.1:8787');
  });

  it('shows the end of a long database path, and the whole path in its tooltip', async () => {
    const path = '/home/shop/.local/share/org.petstore.desktop/petstore.db';
    mockBackend({ get_status: () => localStatus({ target: path }) });
    render(StatusBar);
    await status.refresh();
    const item = await screen.findByTestId('status-backend');
    await waitFor(() => expect(item).toHaveTextContent('Local database · …/org.petstore.desktop/petstore.db'));
    expect(item).not.toHaveTextContent('/home/shop');
    expect(item).toHaveAttribute('title', `Local database: ${path}`);
  });

  it('shortens a Windows path with its own separator', async () => {
    const path = 'C:\\Users\\shop\\AppData\\Roaming\\org.petstore.desktop\\petstore.db';
    mockBackend({ get_status: () => localStatus({ target: path }) });
    render(StatusBar);
    await status.refresh();
    await waitFor(() =>
      expect(screen.getByTestId('status-backend')).toHaveTextContent('Local database · …\\org.petstore.desktop\\petstore.db'),
    );
  });

  it('shows a busy port and an unreachable remote', async () => {
    mockBackend({
      get_status: () =>
        localStatus({
          backend: 'remote',
          target: 'http://shop-server.lan:8787',
          reachable: false,
          message: 'connection refused',
          localApi: { enabled: true, address: null, error: 'port 8787 is already in use' },
        }),
    });
    render(StatusBar);
    await status.refresh();
    await waitFor(() => expect(screen.getByTestId('status-local-api')).toHaveTextContent('port 8787 is already in use'));
    // It leads to the port in Settings, the whole message in its tooltip.
    expect(screen.getByTestId('status-local-api')).toHaveAttribute('href', '#settings');
    expect(screen.getByTestId('status-local-api').title).toContain('choose another port');
    expect(screen.getByTestId('status-backend')).toHaveTextContent('Remote server · http://shop-server.lan:8787');
    expect(screen.getByTestId('status-reachable')).toHaveTextContent('Not reachable: connection refused');
  });

  it('warns when the remote key is kept in a file rather than a keyring', async () => {
    const remote = { backend: 'remote' as const, target: 'http://shop-server.lan:8787' };
    mockBackend({ get_status: () => localStatus({ ...remote, remoteKeyStorage: 'file' }) });
    const inFile = render(StatusBar);
    await status.refresh();
    await waitFor(() => expect(screen.getByTestId('status-remote-key')).toHaveTextContent('Remote key in a file'));
    inFile.unmount();
    mockBackend({ get_status: () => localStatus({ ...remote, remoteKeyStorage: 'keyring' }) });
    render(StatusBar);
    await status.refresh();
    await waitFor(() => expect(screen.getByTestId('status-backend')).toHaveTextContent('Remote server'));
    expect(screen.queryByTestId('status-remote-key')).not.toBeInTheDocument();
  });

  it('polls get_status every 10 seconds', async () => {
    vi.useFakeTimers();
    const b = mockBackend({ get_status: () => localStatus() });
    const stop = status.start();
    expect(b.countOf('get_status')).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(b.countOf('get_status')).toBe(2);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(b.countOf('get_status')).toBe(4);
    stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(b.countOf('get_status')).toBe(4);
  });
});

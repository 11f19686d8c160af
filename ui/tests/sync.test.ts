import { emit } from '@tauri-apps/api/event';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import StatusBar from '../src/components/StatusBar.svelte';
import type { OutboxEntry } from '../src/lib/bindings/OutboxEntry';
import type { SyncStatus } from '../src/lib/bindings/SyncStatus';
import { localStatus } from '../src/dev/fixtures';
import { mockBackend, reject } from '../src/dev/mockBackend';
import { status } from '../src/lib/status.svelte';
import { describeCommand, formatSince, sync, SYNC_EVENT, syncText, unsentText } from '../src/lib/sync.svelte';
import { expectNoMissingKeys, resetLanguageAfterEach, speak } from './languages';

const remote = () => localStatus({ backend: 'remote', target: 'http://shop-server.lan:8787' });

function syncStatus(state: Record<string, unknown>, outbox = { pending: 0, attention: 0 }): SyncStatus {
  return { outbox, position: 42, ...state } as SyncStatus;
}

function entry(seq: number, over: Partial<OutboxEntry> = {}): OutboxEntry {
  return {
    seq,
    key: `00000000-0000-4000-8000-00000000000${seq}`,
    command: { kind: 'placeOrder', orderId: -seq, order: { petId: 7, quantity: 2, shipDate: null, complete: true } },
    state: 'pending',
    reason: null,
    createdAt: '2026-11-22T10:42:00Z',
    petName: 'Rex',
    ...over,
  };
}

// The test's sync.start(), stopped after it.
let stop: (() => void) | undefined;
afterEach(() => {
  stop?.();
  stop = undefined;
  sync.current = null;
  status.current = null;
  status.error = null;
});

describe('Sync status', () => {
  it('says in words where syncing stands', () => {
    const since = '2026-11-22T10:42:00';
    const now = new Date('2026-11-22T15:00:00');
    expect(syncText(syncStatus({ state: 'synced' }))).toBe('Synced');
    expect(syncText(syncStatus({ state: 'catchingUp' }))).toBe('Catching up');
    expect(syncText(syncStatus({ state: 'copying', done: 12_000, total: 100_000 }), 'en-US')).toBe(
      'Copying the shop… 12,000 of 100,000 pets',
    );
    expect(syncText(syncStatus({ state: 'copying', done: 500, total: null }), 'en-US')).toBe('Copying the shop… 500 pets');
    expect(syncText(syncStatus({ state: 'offline', since, reason: 'connection refused' }), 'en-GB', now)).toBe(
      'Offline since 10:42 · sales are kept',
    );
    expect(syncText(syncStatus({ state: 'keyRefused', reason: '401' }))).toBe(
      'The server refuses this till — check the key and address in Settings',
    );
    // Another day: the date too.
    expect(formatSince(since, 'en-GB', new Date('2026-11-23T09:00:00'))).toBe('22 Nov 2026, 10:42');
  });

  it('describes queued writes', () => {
    // By the pet's name; its number only for a pet the till no longer has.
    expect(describeCommand(entry(1).command, 'en-US', 'Rex')).toBe('Sale of 2 × Rex');
    expect(describeCommand(entry(1).command, 'en-US')).toBe('Sale of 2 × pet 7');
    expect(
      describeCommand({ kind: 'placeOrder', orderId: -1, order: { petId: 7, quantity: 1, shipDate: null, complete: false } }),
    ).toBe('Order of 1 × pet 7');
    expect(describeCommand({ kind: 'completeOrder', orderId: 12 }, undefined, 'Rex')).toBe('Completing order #12 (Rex)');
    expect(describeCommand({ kind: 'completeOrder', orderId: 2 ** 52 + 2 }, undefined, 'Rex')).toBe(
      'Completing order offline 3 (Rex)',
    );
    expect(describeCommand({ kind: 'cancelOrder', orderId: 12 })).toBe('Cancelling order #12');
    expect(describeCommand({ kind: 'adjustInventory', petId: 7, adjustment: { delta: -2, reason: 'broken' } })).toBe(
      'Stock of pet 7 −2 (broken)',
    );
  });

  it('shows one state at a time: offline is not also "Reachable", synced not also "Not reachable"', async () => {
    // The status check, asked at another moment, still says the server answered.
    mockBackend({
      get_status: () => remote(),
      get_sync_status: () => syncStatus({ state: 'offline', since: new Date().toISOString(), reason: 'connection refused' }),
    });
    render(StatusBar);
    stop = sync.start();
    await status.refresh();
    const syncing = await screen.findByTestId('status-sync');
    await waitFor(() => expect(syncing).toHaveTextContent(/^Offline since/));
    expect(screen.getByTestId('status-bar')).not.toHaveTextContent('Reachable');
    expect(syncing.querySelector('.dot.bad')).not.toBeNull();

    // And the check's stale "Not reachable" is not shown beside "Synced".
    status.current = { ...remote(), reachable: false, message: 'lost the change feed: the server ended the stream' };
    await emit(SYNC_EVENT, syncStatus({ state: 'synced' }));
    await waitFor(() => expect(screen.getByTestId('status-sync')).toHaveTextContent('Synced'));
    expect(screen.getByTestId('status-bar')).not.toHaveTextContent('reachable');
    expect(screen.getByTestId('status-sync').querySelector('.dot.good')).not.toBeNull();
  });

  it('shows nothing of syncing in local mode', async () => {
    const b = mockBackend({ get_status: () => localStatus(), get_sync_status: () => null });
    render(StatusBar);
    stop = sync.start();
    await waitFor(() => expect(b.countOf('get_sync_status')).toBe(1));
    expect(screen.queryByTestId('status-sync')).not.toBeInTheDocument();
    expect(screen.queryByTestId('outbox-badge')).not.toBeInTheDocument();
  });

  it('follows petstore://sync in the status bar, with the badge', async () => {
    mockBackend({ get_status: () => remote(), get_sync_status: () => syncStatus({ state: 'catchingUp' }) });
    render(StatusBar);
    stop = sync.start();
    expect(await screen.findByTestId('status-sync')).toHaveTextContent('Catching up');
    expect(screen.queryByTestId('outbox-badge')).not.toBeInTheDocument();

    await emit(SYNC_EVENT, syncStatus({ state: 'synced' }));
    await waitFor(() => expect(screen.getByTestId('status-sync')).toHaveTextContent('Synced'));

    await emit(SYNC_EVENT, syncStatus({ state: 'copying', done: 12_000, total: 100_000 }));
    await waitFor(() => expect(screen.getByTestId('status-sync')).toHaveTextContent(/^Copying the shop… 12.000 of 100.000 pets$/));

    await emit(SYNC_EVENT, syncStatus({ state: 'offline', since: new Date().toISOString(), reason: 'timed out' }, { pending: 3, attention: 0 }));
    await waitFor(() => expect(screen.getByTestId('status-sync')).toHaveTextContent(/^Offline since .+ · sales are kept$/));
    expect(screen.getByTestId('status-sync')).toHaveAttribute('title', expect.stringMatching(/^timed out — sales, orders and stock changes are kept/));
    expect(screen.getByTestId('outbox-pending')).toHaveTextContent('3 to send');
    expect(screen.queryByTestId('outbox-attention')).not.toBeInTheDocument();

    await emit(SYNC_EVENT, syncStatus({ state: 'keyRefused', reason: 'unauthorized' }, { pending: 3, attention: 1 }));
    await waitFor(() => expect(screen.getByTestId('status-sync')).toHaveTextContent('The server refuses this till — check the key and address in Settings'));
    expect(screen.getByTestId('outbox-pending')).toHaveTextContent('3 to send');
    expect(screen.getByTestId('outbox-attention')).toHaveTextContent('1 needs attention');

    await emit(SYNC_EVENT, syncStatus({ state: 'synced' }, { pending: 0, attention: 2 }));
    await waitFor(() => expect(screen.getByTestId('outbox-attention')).toHaveTextContent('2 need attention'));
    expect(screen.queryByTestId('outbox-pending')).not.toBeInTheDocument();

    // Back to local mode.
    await emit(SYNC_EVENT, null);
    await waitFor(() => expect(screen.queryByTestId('status-sync')).not.toBeInTheDocument());
    expect(screen.queryByTestId('outbox-badge')).not.toBeInTheDocument();
  });

  it('lists the outbox; "Send again" and "Drop" call their commands', async () => {
    let entries: OutboxEntry[] = [
      entry(1),
      entry(2, {
        command: { kind: 'adjustInventory', petId: 7, adjustment: { delta: -2, reason: 'broken' } },
        state: 'attention',
        reason: 'not enough stock: 0 left',
      }),
      entry(3, { command: { kind: 'cancelOrder', orderId: 12 }, state: 'attention', reason: 'order 12 is complete' }),
    ];
    const b = mockBackend({
      get_status: () => remote(),
      get_sync_status: () => syncStatus({ state: 'synced' }, { pending: 1, attention: 2 }),
      list_outbox: () => entries,
      retry_outbox_entry: ({ seq }) => {
        entries = entries.map((e) => (e.seq === seq ? { ...e, state: 'pending', reason: null } : e));
        return null;
      },
      drop_outbox_entry: ({ seq }) => {
        entries = entries.filter((e) => e.seq !== seq);
        return null;
      },
    });
    render(StatusBar);
    stop = sync.start();
    await userEvent.click(await screen.findByTestId('outbox-badge'));
    const dialog = await screen.findByTestId('outbox-dialog');
    expect(await within(dialog).findByTestId('outbox-row-1')).toHaveTextContent('Sale of 2 × Rex');
    expect(within(dialog).getByTestId('outbox-row-1')).not.toHaveTextContent('pet 7');
    expect(within(dialog).getByTestId('outbox-row-1')).toHaveTextContent('Waiting to send');
    expect(within(dialog).queryByTestId('outbox-retry-1')).not.toBeInTheDocument();
    expect(within(dialog).getByTestId('outbox-row-2')).toHaveTextContent('Stock of Rex −2 (broken)');
    expect(within(dialog).getByTestId('outbox-row-2')).toHaveTextContent('Needs attention');
    expect(within(dialog).getByTestId('outbox-reason-2')).toHaveTextContent('not enough stock: 0 left');
    expect(within(dialog).getByTestId('outbox-row-3')).toHaveTextContent('Cancelling order #12 (Rex)');

    await userEvent.click(within(dialog).getByTestId('outbox-retry-2'));
    expect(b.argsOf('retry_outbox_entry')).toEqual([{ seq: 2 }]);
    await waitFor(() => expect(within(dialog).queryByTestId('outbox-retry-2')).not.toBeInTheDocument());

    // Dropping asks first.
    await userEvent.click(within(dialog).getByTestId('outbox-drop-3'));
    expect(b.countOf('drop_outbox_entry')).toBe(0);
    await userEvent.click(screen.getByTestId('confirm'));
    expect(b.argsOf('drop_outbox_entry')).toEqual([{ seq: 3 }]);
    await waitFor(() => expect(within(dialog).queryByTestId('outbox-row-3')).not.toBeInTheDocument());

    // A sync event refreshes the list: the server took the rest.
    entries = [];
    const before = b.countOf('list_outbox');
    await emit(SYNC_EVENT, syncStatus({ state: 'synced' }));
    await waitFor(() => expect(b.countOf('list_outbox')).toBe(before + 1));
    expect(await within(dialog).findByTestId('empty-state')).toHaveTextContent('Nothing to send');

    // Esc closes it.
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByTestId('outbox-dialog')).not.toBeInTheDocument());
  });

  it('shows why a retry failed', async () => {
    mockBackend({
      get_status: () => remote(),
      get_sync_status: () => syncStatus({ state: 'offline', since: new Date().toISOString(), reason: 'x' }, { pending: 0, attention: 1 }),
      list_outbox: () => [entry(4, { state: 'attention', reason: 'sold out' })],
      retry_outbox_entry: reject('unreachable', 'the server did not answer', 503),
    });
    render(StatusBar);
    stop = sync.start();
    await userEvent.click(await screen.findByTestId('outbox-badge'));
    await userEvent.click(await screen.findByTestId('outbox-retry-4'));
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('the server did not answer');
  });
});

describe('in German and Spanish', () => {
  resetLanguageAfterEach();
  afterEach(() => {
    status.current = null;
    status.error = null;
  });

  it('the status bar, its outbox badge and the outbox in German', async () => {
    speak('de');
    mockBackend({
      get_status: () => remote(),
      get_sync_status: () => syncStatus({ state: 'synced' }, { pending: 1234, attention: 1 }),
      list_outbox: () => [
        entry(1),
        entry(2, {
          command: { kind: 'adjustInventory', petId: 7, adjustment: { delta: -2, reason: 'broken' } },
          state: 'attention',
          reason: 'not enough stock: 0 left',
        }),
      ],
    });
    render(StatusBar);
    stop = sync.start();
    await status.refresh();
    expect(await screen.findByTestId('status-backend')).toHaveTextContent('Remote-Server · http://shop-server.lan:8787');
    // One state: the sync's, not a second one of the status check beside it.
    expect(screen.queryByTestId('status-reachable')).not.toBeInTheDocument();
    expect(screen.getByTestId('status-local-api')).toHaveTextContent('Lokale API · http://127.0.0.1:8787');
    expect(await screen.findByTestId('status-sync')).toHaveTextContent('Synchronisiert');
    expect(screen.getByTestId('outbox-pending')).toHaveTextContent('1.234 zu senden');
    expect(screen.getByTestId('outbox-attention')).toHaveTextContent('1 zu prüfen');

    await emit(SYNC_EVENT, syncStatus({ state: 'copying', done: 12_000, total: 100_000 }, { pending: 1, attention: 1 }));
    await waitFor(() =>
      expect(screen.getByTestId('status-sync')).toHaveTextContent('Shop wird kopiert… 12.000 von 100.000 Tieren'),
    );

    await userEvent.click(screen.getByTestId('outbox-badge'));
    const dialog = await screen.findByRole('dialog', { name: 'Warteschlange' });
    expect(await within(dialog).findByTestId('outbox-row-1')).toHaveTextContent('Verkauf von 2 × Rex');
    expect(within(dialog).getByTestId('outbox-row-1')).toHaveTextContent('Wartet auf Senden');
    expect(within(dialog).getByTestId('outbox-row-2')).toHaveTextContent('Bestand von Rex −2 (broken)');
    expect(within(dialog).getByTestId('outbox-reason-2')).toHaveTextContent('Der Server meldet: not enough stock: 0 left');
    expect(within(dialog).getByTestId('outbox-retry-2')).toHaveTextContent('Erneut senden');
    expectNoMissingKeys();
  });

  it('the status bar offline and with a busy port in Spanish', async () => {
    speak('es');
    mockBackend({
      get_status: () =>
        localStatus({
          backend: 'local',
          target: '/data/petstore.db',
          localApi: { enabled: true, address: null, error: 'port 8787 is already in use' },
        }),
      get_sync_status: () =>
        syncStatus({ state: 'offline', since: new Date().toISOString(), reason: 'timed out' }, { pending: 2, attention: 3 }),
    });
    render(StatusBar);
    stop = sync.start();
    await status.refresh();
    expect(await screen.findByTestId('status-backend')).toHaveTextContent('Base de datos local · /data/petstore.db');
    const api = screen.getByTestId('status-local-api');
    expect(api).toHaveTextContent('Error de la API local: port 8787 is already in use');
    expect(api).toHaveAttribute('title', expect.stringContaining('Abre Ajustes para elegir otro puerto.'));
    const syncing = await screen.findByTestId('status-sync');
    expect(syncing).toHaveTextContent(/^Sin conexión desde .+ · las ventas se guardan$/);
    expect(syncing).toHaveAttribute('title', expect.stringMatching(/^timed out — las ventas/));
    expect(screen.getByTestId('outbox-attention')).toHaveTextContent('3 requieren atención');
    expectNoMissingKeys();
  });

  it('says in words what the outbox holds, in both languages', () => {
    speak('de');
    expect(unsentText({ pending: 3, attention: 1 })).toBe(
      '4 Verkäufe oder Bestandsänderungen sind noch nicht beim Server angekommen (1 zu prüfen). ' +
        'Sie bleiben an dieser Kasse gespeichert und werden gesendet, sobald Petstore wieder im Remote-Modus mit diesem Server läuft und er antwortet.',
    );
    expect(unsentText({ pending: 1, attention: 0 })).toMatch(/^1 Verkauf oder Bestandsänderung ist noch nicht beim Server angekommen\. /);
    expect(syncText(syncStatus({ state: 'keyRefused', reason: '401' }))).toBe(
      'Der Server weist diese Kasse ab — prüfen Sie Schlüssel und Adresse in den Einstellungen',
    );
    expect(describeCommand({ kind: 'cancelOrder', orderId: 12 }, undefined, 'Rex')).toBe('Bestellung #12 (Rex) stornieren');

    speak('es');
    expect(unsentText({ pending: 1, attention: 0 })).toMatch(/^1 venta o cambio de stock aún no ha llegado al servidor\. /);
    expect(syncText(syncStatus({ state: 'copying', done: 1, total: null }))).toBe('Copiando la tienda… 1 mascota');
    expect(describeCommand({ kind: 'completeOrder', orderId: 12 })).toBe('Completar el pedido #12');
    expect(describeCommand({ kind: 'placeOrder', orderId: -1, order: { petId: 7, quantity: 1, shipDate: null, complete: true } }, undefined, 'Rex')).toBe('Venta de 1 × Rex');
    expectNoMissingKeys();
  });

});

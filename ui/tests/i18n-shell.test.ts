// The app shell (menu, status bar, outbox, shortcuts, pager, dialogs), Inventory and
// Categories in German and Spanish: every text translated, none missing, and a change of
// language shown at once.
import { emit } from '@tauri-apps/api/event';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import ConfirmButton from '../src/components/ConfirmButton.svelte';
import LeaveOutboxDialog from '../src/components/LeaveOutboxDialog.svelte';
import Nav from '../src/components/Nav.svelte';
import Pager from '../src/components/Pager.svelte';
import ShortcutsDialog from '../src/components/ShortcutsDialog.svelte';
import StatusBar from '../src/components/StatusBar.svelte';
import Toast from '../src/components/Toast.svelte';
import type { OutboxEntry } from '../src/lib/bindings/OutboxEntry';
import type { SyncStatus } from '../src/lib/bindings/SyncStatus';
import { category, localStatus, paged, pet, shopSettings, stockEntry, stockItem } from '../src/dev/fixtures';
import { mockBackend, type Handler } from '../src/dev/mockBackend';
import { i18n, missingKeys } from '../src/lib/i18n.svelte';
import { lowStock } from '../src/lib/lowStock.svelte';
import { shop } from '../src/lib/shop.svelte';
import { status } from '../src/lib/status.svelte';
import { describeCommand, sync, SYNC_EVENT, syncText, unsentText } from '../src/lib/sync.svelte';
import { toast } from '../src/lib/toast.svelte';
import CategoriesScreen from '../src/screens/CategoriesScreen.svelte';
import InventoryScreen from '../src/screens/InventoryScreen.svelte';

const ITEMS = [stockItem(3, 'Tom', 0, { status: 'sold' }), stockItem(1, 'Rex', 4), stockItem(2, 'Bella', 9)];

function inventoryBackend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_inventory: ({ query }) =>
      paged(ITEMS.filter((i) => query.belowQuantity === null || i.quantity < query.belowQuantity)),
    stock_history: () =>
      paged([
        stockEntry('order_cancelled', 2, 5, { orderId: 12 }),
        stockEntry('counter_sale', -2, 3, { orderId: 11 }),
        stockEntry('adjusted', 5, 5, { reason: null }),
      ]),
    list_categories: () => paged([category(1, 'Dogs', 2)]),
    list_pets: () => paged([pet(1, 'Rex')], 3),
    get_inventory: ({ petId }) => ITEMS.find((i) => i.petId === petId),
    ...more,
  });
}

function syncStatus(state: Record<string, unknown>, outbox = { pending: 0, attention: 0 }): SyncStatus {
  return { outbox, position: 42, ...state } as SyncStatus;
}

function outboxEntry(seq: number, over: Partial<OutboxEntry> = {}): OutboxEntry {
  return {
    seq,
    key: `00000000-0000-4000-8000-00000000000${seq}`,
    command: { kind: 'placeOrder', orderId: -seq, order: { petId: 7, quantity: 2, shipDate: null, complete: true } },
    state: 'pending',
    reason: null,
    createdAt: '2026-11-22T10:42:00Z',
    ...over,
  };
}

afterEach(() => {
  i18n.apply('en', ['en-US']);
  missingKeys.clear();
  sync.current = null;
  status.current = null;
  status.error = null;
  lowStock.count = null;
});

describe('Inventory in German and Spanish', () => {
  it('German: the table, its buttons, the history and its lines', async () => {
    i18n.apply('de', ['de-DE']);
    inventoryBackend();
    render(InventoryScreen);
    await screen.findByTestId('inventory-row-1');
    expect(screen.getByRole('heading', { name: 'Bestand' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Tier' })).toBeInTheDocument();
    expect(screen.getByText('Nur niedriger Bestand')).toBeInTheDocument();
    expect(screen.getByTestId('inventory-search')).toHaveAttribute('placeholder', 'Nach Namen suchen…');
    expect(screen.getByTestId('set-stock-1')).toHaveAccessibleName('Bestand von Rex setzen');
    expect(screen.getByTestId('adjust-stock-1')).toHaveTextContent('Anpassen');

    await userEvent.click(screen.getByTestId('history-1'));
    const dialog = await screen.findByRole('dialog', { name: 'Bestandsverlauf von Rex' });
    expect(within(dialog).getByTestId('history-intro')).toHaveTextContent('Rex hat jetzt 4 im Bestand.');
    expect(await within(dialog).findByTestId('history-row-0')).toHaveTextContent('Bestellung #12 storniert: wieder im Bestand');
    expect(within(dialog).getByTestId('history-row-1')).toHaveTextContent('An der Theke verkauft (Bestellung #11)');
    expect(within(dialog).getByTestId('history-row-2')).toHaveTextContent('Bestand gezählt');
    expect(within(dialog).getByRole('columnheader', { name: 'Bestand danach' })).toBeInTheDocument();
    // The × in the corner and the button at the bottom.
    expect(within(dialog).getAllByRole('button', { name: 'Schließen' })).toHaveLength(2);
    expect([...missingKeys]).toEqual([]);
  });

  it('German: adjusting names its limit, offers its reasons and says what was done', async () => {
    i18n.apply('de', ['de-DE']);
    inventoryBackend({
      adjust_inventory: ({ petId, adjustment }) => stockItem(petId, 'Rex', 4 + adjustment.delta),
    });
    render(InventoryScreen);
    await userEvent.click(await screen.findByTestId('adjust-stock-1'));
    const dialog = await screen.findByRole('dialog', { name: 'Bestand von Rex anpassen' });
    expect(dialog.querySelectorAll('datalist option')[0]).toHaveAttribute('value', 'Lieferung erhalten');
    expect(within(dialog).getByRole('button', { name: 'Eins mehr' })).toBeInTheDocument();
    const delta = within(dialog).getByTestId('adjust-delta');
    await userEvent.clear(delta);
    await userEvent.type(delta, '-9');
    await userEvent.type(within(dialog).getByTestId('adjust-reason'), 'Beschädigt');
    await userEvent.click(within(dialog).getByTestId('save-adjustment'));
    expect(dialog).toHaveTextContent('Nur 4 im Bestand: Sie können höchstens 4 entfernen.');

    await userEvent.clear(delta);
    await userEvent.type(delta, '2');
    await userEvent.click(within(dialog).getByTestId('save-adjustment'));
    await waitFor(() => expect(toast.message).toBe('Rex: angepasst, 6 vorrätig'));
    expect([...missingKeys]).toEqual([]);
  });

  it('Spanish: the screen and the dialog to set the count', async () => {
    i18n.apply('es', ['es-ES']);
    inventoryBackend();
    render(InventoryScreen);
    await screen.findByTestId('inventory-row-1');
    expect(screen.getByRole('heading', { name: 'Inventario' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'En stock' })).toBeInTheDocument();
    expect(screen.getByTestId('history-1')).toHaveAccessibleName('Historial de stock de Rex');
    await userEvent.click(screen.getByTestId('set-stock-1'));
    const dialog = await screen.findByRole('dialog', { name: 'Fijar el stock de Rex' });
    expect(within(dialog).getByLabelText('Cantidad en stock')).toHaveValue(4);
    expect(within(dialog).getByRole('button', { name: 'Cancelar' })).toBeInTheDocument();
    expect(within(dialog).getByTestId('save-stock')).toHaveTextContent('Fijar cantidad');
    expect([...missingKeys]).toEqual([]);
  });
});

describe('Categories in German and Spanish', () => {
  it('German: plurals of the pets in use, the question and the form', async () => {
    i18n.apply('de', ['de-DE']);
    mockBackend({ list_categories: () => paged([category(1, 'Dogs', 12), category(2, 'Cats', 1), category(3, 'Fish', 0)]) });
    render(CategoriesScreen);
    expect(await screen.findByTestId('pet-count-1')).toHaveTextContent('12');
    expect(screen.getByRole('heading', { name: 'Kategorien' })).toBeInTheDocument();
    expect(screen.getByTestId('delete-category-1')).toHaveAccessibleName('Dogs löschen (nicht möglich, solange sie 12 Tiere hat)');
    expect(screen.getByTestId('delete-category-2')).toHaveAccessibleName('Cats löschen (nicht möglich, solange sie 1 Tier hat)');
    expect(screen.getByTestId('delete-category-2').parentElement).toHaveAttribute(
      'title',
      'Cats hat 1 Tier: Verschieben oder löschen Sie es zuerst',
    );
    expect(screen.getByTestId('show-pets-1')).toHaveTextContent('Tiere anzeigen');

    await userEvent.click(screen.getByTestId('delete-category-3'));
    const question = screen.getByRole('dialog', { name: 'Kategorie Fish löschen?' });
    expect(question).toHaveTextContent('Damit wird die Kategorie Fish entfernt.');
    await userEvent.click(within(question).getByRole('button', { name: 'Behalten' }));

    await userEvent.click(screen.getByTestId('new-category'));
    const form = screen.getByRole('dialog', { name: 'Neue Kategorie' });
    await userEvent.click(within(form).getByTestId('save-category'));
    expect(form).toHaveTextContent('Geben Sie einen Namen ein.');
    expect(within(form).getByTestId('save-category')).toHaveTextContent('Kategorie anlegen');
    expect([...missingKeys]).toEqual([]);
  });

  it('Spanish: plurals, grouped numbers, and the empty list', async () => {
    i18n.apply('es', ['es-ES']);
    mockBackend({ list_categories: () => paged([category(1, 'Perros', 12_345), category(2, 'Gatos', 1)]) });
    const { unmount } = render(CategoriesScreen);
    expect(await screen.findByTestId('pet-count-1')).toHaveTextContent('12.345');
    expect(screen.getByTestId('delete-category-1')).toHaveAccessibleName(
      'Eliminar Perros (no es posible mientras tenga 12.345 mascotas)',
    );
    expect(screen.getByTestId('delete-category-2')).toHaveAccessibleName('Eliminar Gatos (no es posible mientras tenga 1 mascota)');
    expect(screen.getByTestId('rename-category-2')).toHaveAccessibleName('Renombrar Gatos');
    unmount();

    mockBackend({ list_categories: () => paged([]) });
    render(CategoriesScreen);
    expect(await screen.findByTestId('empty-state')).toHaveTextContent('Aún no hay categorías');
    expect([...missingKeys]).toEqual([]);
  });
});

describe('The app shell in German and Spanish', () => {
  it('the menu names the screens and the low-stock badge, and follows a change of language at once', async () => {
    mockBackend({
      get_shop_settings: () => shopSettings({ lowStockBelow: 3 }),
      list_inventory: () => paged([stockItem(6, 'Nemo', 2)], 4),
    });
    await shop.refresh();
    render(Nav);
    await lowStock.refresh();
    expect(screen.getByTestId('nav-inventory')).toHaveTextContent('Inventory');

    i18n.apply('de', ['de-DE']);
    await waitFor(() => expect(screen.getByTestId('nav-inventory')).toHaveTextContent('Bestand'));
    expect(screen.getByTestId('nav-pets')).toHaveTextContent('Tiere');
    expect(screen.getByTestId('nav-sales')).toHaveTextContent('Umsatz');
    expect(screen.getByTestId('low-stock-badge')).toHaveAttribute('title', '4 Tiere mit niedrigem Bestand');
    expect(screen.getByTestId('shortcuts-help')).toHaveTextContent('Tastenkürzel');
    expect(screen.getByRole('navigation')).toHaveAccessibleName('Ansichten');

    i18n.apply('es', ['es-ES']);
    await waitFor(() => expect(screen.getByTestId('nav-settings')).toHaveTextContent('Ajustes'));
    expect(screen.getByTestId('low-stock-badge')).toHaveAttribute('title', '4 mascotas con stock bajo');
    expect([...missingKeys]).toEqual([]);
  });

  it('the shortcuts: "Strg" on German keycaps, Ctrl in Spanish', () => {
    i18n.apply('de', ['de-DE']);
    const { unmount } = render(ShortcutsDialog, { onclose: vi.fn() });
    let dialog = screen.getByRole('dialog', { name: 'Tastenkürzel' });
    expect(dialog).toHaveTextContent('Einstellungen öffnen');
    expect(dialog).toHaveTextContent('Neues Tier');
    expect([...dialog.querySelectorAll('kbd')].map((k) => k.textContent)).toContain('Strg');
    expect(dialog).not.toHaveTextContent('Ctrl');
    unmount();

    i18n.apply('es', ['es-ES']);
    render(ShortcutsDialog, { onclose: vi.fn() });
    dialog = screen.getByRole('dialog', { name: 'Atajos de teclado' });
    expect(dialog).toHaveTextContent('Ir a Ajustes');
    expect([...dialog.querySelectorAll('kbd')].map((k) => k.textContent)).toContain('Ctrl');
    expect(within(dialog).getAllByRole('button', { name: 'Cerrar' })).toHaveLength(2);
    expect([...missingKeys]).toEqual([]);
  });

  it('the status bar, its outbox badge and the outbox in German', async () => {
    i18n.apply('de', ['de-DE']);
    mockBackend({
      get_status: () => localStatus({ backend: 'remote', target: 'http://shop-server.lan:8787' }),
      get_sync_status: () => syncStatus({ state: 'synced' }, { pending: 1234, attention: 1 }),
      list_outbox: () => [
        outboxEntry(1),
        outboxEntry(2, {
          command: { kind: 'adjustInventory', petId: 7, adjustment: { delta: -2, reason: 'broken' } },
          state: 'attention',
          reason: 'not enough stock: 0 left',
        }),
      ],
    });
    render(StatusBar);
    const stop = sync.start();
    try {
      await status.refresh();
      expect(await screen.findByTestId('status-backend')).toHaveTextContent('Remote-Server · http://shop-server.lan:8787');
      expect(screen.getByTestId('status-reachable')).toHaveTextContent('Erreichbar');
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
      expect(await within(dialog).findByTestId('outbox-row-1')).toHaveTextContent('Verkauf von 2 × Tier 7');
      expect(within(dialog).getByTestId('outbox-row-1')).toHaveTextContent('Wartet auf Senden');
      expect(within(dialog).getByTestId('outbox-row-2')).toHaveTextContent('Bestand von Tier 7 −2 (broken)');
      expect(within(dialog).getByTestId('outbox-reason-2')).toHaveTextContent('Der Server meldet: not enough stock: 0 left');
      expect(within(dialog).getByTestId('outbox-retry-2')).toHaveTextContent('Erneut senden');
      expect([...missingKeys]).toEqual([]);
    } finally {
      stop();
    }
  });

  it('the status bar offline and with a busy port in Spanish', async () => {
    i18n.apply('es', ['es-ES']);
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
    const stop = sync.start();
    try {
      await status.refresh();
      expect(await screen.findByTestId('status-backend')).toHaveTextContent('Base de datos local · /data/petstore.db');
      const api = screen.getByTestId('status-local-api');
      expect(api).toHaveTextContent('Error de la API local: port 8787 is already in use');
      expect(api).toHaveAttribute('title', expect.stringContaining('Abre Ajustes para elegir otro puerto.'));
      const syncing = await screen.findByTestId('status-sync');
      expect(syncing).toHaveTextContent(/^Sin conexión desde .+ · las ventas se guardan$/);
      expect(syncing).toHaveAttribute('title', expect.stringMatching(/^timed out — las ventas/));
      expect(screen.getByTestId('outbox-attention')).toHaveTextContent('3 requieren atención');
      expect([...missingKeys]).toEqual([]);
    } finally {
      stop();
    }
  });

  it('says in words what the outbox holds, in both languages', () => {
    i18n.apply('de', ['de-DE']);
    expect(unsentText({ pending: 3, attention: 1 })).toBe(
      '4 Verkäufe oder Bestandsänderungen sind noch nicht beim Server angekommen (1 zu prüfen). ' +
        'Sie bleiben an dieser Kasse gespeichert und werden gesendet, sobald Petstore wieder im Remote-Modus mit diesem Server läuft und er antwortet.',
    );
    expect(unsentText({ pending: 1, attention: 0 })).toMatch(/^1 Verkauf oder Bestandsänderung ist noch nicht beim Server angekommen\. /);
    expect(syncText(syncStatus({ state: 'keyRefused', reason: '401' }))).toBe(
      'Der Server weist diese Kasse ab — prüfen Sie Schlüssel und Adresse in den Einstellungen',
    );
    expect(describeCommand({ kind: 'cancelOrder', orderId: 12 })).toBe('Bestellung 12 stornieren');

    i18n.apply('es', ['es-ES']);
    expect(unsentText({ pending: 1, attention: 0 })).toMatch(/^1 venta o cambio de stock aún no ha llegado al servidor\. /);
    expect(syncText(syncStatus({ state: 'copying', done: 1, total: null }))).toBe('Copiando la tienda… 1 mascota');
    expect(describeCommand({ kind: 'completeOrder', orderId: 12 })).toBe('Completar el pedido 12');
    expect([...missingKeys]).toEqual([]);
  });

  it('the question before leaving, the pager, a confirmation and the toast', async () => {
    i18n.apply('de', ['de-DE']);
    render(LeaveOutboxDialog, { counts: { pending: 2, attention: 0 }, leaving: 'quit', onstay: vi.fn(), onleave: vi.fn() });
    const leave = screen.getByRole('dialog', { name: 'Noch nicht auf dem Server' });
    expect(within(leave).getByTestId('leave-outbox-stay')).toHaveTextContent('Petstore offen lassen');
    expect(within(leave).getByTestId('leave-outbox-leave')).toHaveTextContent('Trotzdem beenden');
    expect(within(leave).getByRole('button', { name: 'Schließen' })).toHaveAttribute('title', 'Schließen (Esc)');

    render(Pager, { offset: 25, limit: 25, count: 25, total: 1234, onpage: vi.fn() });
    const pager = screen.getByRole('navigation', { name: 'Seiten' });
    expect(within(pager).getByTestId('pager-range')).toHaveTextContent('26–50 von 1.234');
    expect(within(pager).getByTestId('pager-prev')).toHaveTextContent('‹ Zurück');
    expect(within(pager).getByTestId('pager-next')).toHaveTextContent('Weiter ›');
    expect(within(pager).getByTestId('pager-first')).toHaveAccessibleName('Erste Seite');

    i18n.apply('es', ['es-ES']);
    render(ConfirmButton, { label: 'Borrar', title: '¿Borrar?', message: 'Seguro', confirmLabel: 'Borrar', onconfirm: vi.fn() });
    await userEvent.click(screen.getByRole('button', { name: 'Borrar' }));
    expect(screen.getByRole('dialog', { name: '¿Borrar?' })).toHaveTextContent('Conservar');

    render(Toast);
    toast.show('Hecho');
    expect(await screen.findByTestId('toast')).toHaveAccessibleName('Aviso');
    expect(within(screen.getByTestId('toast')).getByRole('button', { name: 'Descartar' })).toBeInTheDocument();
    expect([...missingKeys]).toEqual([]);
  });
});

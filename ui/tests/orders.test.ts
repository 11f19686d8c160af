import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { order, paged, pet, shopSettings, stockItem } from '../src/dev/fixtures';
import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import { lineTotal } from '../src/lib/money';
import { shop } from '../src/lib/shop.svelte';
import { toast } from '../src/lib/toast.svelte';
import OrdersScreen from '../src/screens/OrdersScreen.svelte';
import { listPets } from './fixtures/pets';
import { expectNoMissingKeys, resetLanguageAfterEach, speak } from './languages';
import { scan } from './scanner';

const BARCODE = '4006381333931';
const PETS = [pet(1, 'Rex', { price: '12.50', sku: BARCODE }), pet(2, 'Bella'), pet(3, 'Tom', { status: 'sold', sku: 'T-3' })];
const ORDERS = [
  order(12, 1, { quantity: 2, unitPrice: '12.50', total: '25.00' }),
  order(11, 2, { customerName: 'Ana García', customerPhone: '+34 600 123 456', note: 'Collects Saturday' }),
];
const DONE = order(10, 1, { complete: true, unitPrice: '12.50', total: '12.50', completedAt: '2026-11-22T10:20:00Z' });
const CANCELLED = order(9, 2, { customerName: 'Tom Weber', cancelledAt: '2026-11-22T10:25:00Z' });

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_orders: ({ query }) => paged(query.cancelled ? [CANCELLED] : query.complete ? [DONE] : ORDERS),
    list_pets: listPets(PETS),
    update_order: ({ id, patch }) => ({
      ...order(id, 1, { complete: patch.complete, completedAt: patch.complete ? '2026-11-22T10:30:00Z' : null }),
      unitPrice: '12.50',
      total: '25.00',
      quantity: 2,
    }),
    cancel_order: () => null,
    get_inventory: ({ petId }) => stockItem(petId, 'Rex', 3),
    place_order: ({ order: o }) => ({
      ...order(13, o.petId, o),
      unitPrice: PETS[o.petId - 1].price,
      total: lineTotal(PETS[o.petId - 1].price, o.quantity),
      completedAt: o.complete ? '2026-11-22T10:40:00Z' : null,
    }),
    get_shop_settings: () => shopSettings({ shopName: 'Paws & Co' }),
    ...more,
  });
}

/** Picks Rex by name from the order panel's Pet field. */
async function chooseRex() {
  await userEvent.type(screen.getByTestId('order-pet'), 'Rex');
  await userEvent.click(await screen.findByTestId('pet-option-1'));
  await screen.findByTestId('order-pet-selected');
}

describe('Orders screen', () => {
  it('lists open orders newest first with their pet names, fetched by ids', async () => {
    const b = backend();
    render(OrdersScreen);
    const row = await screen.findByTestId('order-row-12');
    expect(within(row).getByText('Rex')).toBeInTheDocument();
    expect(within(screen.getByTestId('order-row-11')).getByText('Bella')).toBeInTheDocument();
    expect(b.argsOf('list_orders')[0]).toEqual({ query: { petId: null, complete: false, limit: 25, offset: 0 } });
    expect(b.argsOf('list_pets')[0].query).toMatchObject({ ids: [1, 2], limit: 100 });
  });

  it('the Completed tab asks for complete orders and offers no actions', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.click(screen.getByTestId('tab-completed'));
    await screen.findByTestId('order-row-10');
    expect(b.argsOf('list_orders').at(-1)!.query).toMatchObject({ complete: true, offset: 0 });
    expect(screen.queryByTestId('complete-order-10')).not.toBeInTheDocument();
  });

  it('the Cancelled tab asks for cancelled orders, shows when each was cancelled and offers no actions', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.click(screen.getByTestId('tab-cancelled'));
    const row = await screen.findByTestId('order-row-9');
    expect(b.argsOf('list_orders').at(-1)!.query).toEqual({ petId: null, complete: null, cancelled: true, limit: 25, offset: 0 });
    expect(within(row).getByText('Bella')).toBeInTheDocument();
    expect(within(row).getByTestId('order-customer')).toHaveTextContent('Tom Weber');
    expect(screen.getByRole('columnheader', { name: 'Cancelled' })).toBeInTheDocument();
    expect(within(row).getByTestId('order-cancelled-9')).not.toHaveTextContent('—');
    expect(within(row).queryAllByRole('button')).toEqual([]);

    await userEvent.type(screen.getByTestId('order-search'), 'Tom');
    await waitFor(() => expect(b.argsOf('list_orders').at(-1)!.query).toMatchObject({ cancelled: true, q: 'Tom' }));
  });

  it('the arrow keys go round the three tabs', async () => {
    backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    screen.getByTestId('tab-open').focus();
    await userEvent.keyboard('{ArrowLeft}');
    expect(screen.getByTestId('tab-cancelled')).toHaveFocus();
    expect(screen.getByTestId('tab-cancelled')).toHaveAttribute('aria-selected', 'true');
    await userEvent.keyboard('{ArrowRight}');
    expect(screen.getByTestId('tab-open')).toHaveFocus();
  });

  it('Undo in the toast after completing reopens the order', async () => {
    const b = backend();
    render(OrdersScreen);
    await userEvent.click(await screen.findByTestId('complete-order-12'));
    await waitFor(() => expect(toast.action?.label).toBe('Undo'));
    await screen.findByTestId('last-sale');
    await toast.act();
    await waitFor(() => expect(b.argsOf('update_order').at(-1)).toEqual({ id: 12, patch: { complete: false } }));
    await waitFor(() => expect(toast.message).toBe('Order #12 is open again'));
    expect(toast.action).toBeNull();
    expect(screen.queryByTestId('last-sale')).not.toBeInTheDocument();
  });

  it('Complete calls update_order with complete: true and says so', async () => {
    const b = backend();
    render(OrdersScreen);
    await userEvent.click(await screen.findByTestId('complete-order-12'));
    await waitFor(() => expect(b.argsOf('update_order')).toEqual([{ id: 12, patch: { complete: true } }]));
    await waitFor(() => expect(toast.message).toBe('Order #12 completed'));
  });

  it('Cancel asks first, then calls cancel_order', async () => {
    const b = backend();
    render(OrdersScreen);
    await userEvent.click(await screen.findByTestId('cancel-order-11'));
    expect(screen.getByRole('dialog', { name: 'Cancel order #11?' })).toHaveTextContent('back into stock');
    expect(b.countOf('cancel_order')).toBe(0);
    await userEvent.click(screen.getByTestId('confirm'));
    await waitFor(() => expect(b.argsOf('cancel_order')).toEqual([{ id: 11 }]));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('a refused completion shows the server message', async () => {
    backend({ update_order: reject('order_completed', 'Order 12 is already completed.') });
    render(OrdersScreen);
    await userEvent.click(await screen.findByTestId('complete-order-12'));
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('Order 12 is already completed.');
  });

  it('places an order for a pet found by name; Enter picks the first match', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.type(screen.getByTestId('order-pet'), 'Re');
    await screen.findByTestId('pet-option-1');
    // The picker only offers available pets: only they can be ordered.
    expect(b.argsOf('list_pets').at(-1)!.query).toMatchObject({ q: 'Re', statuses: ['available'] });
    await userEvent.type(screen.getByTestId('order-pet'), '{Enter}');
    expect(await screen.findByTestId('order-pet-selected')).toHaveTextContent('Rex');
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '3');
    await userEvent.click(screen.getByTestId('place-order'));
    await waitFor(() =>
      expect(b.argsOf('place_order')).toEqual([{ order: { petId: 1, quantity: 3, shipDate: null, complete: false } }]),
    );
  });

  it('Sell now places the order with complete: true; a stock conflict is explained', async () => {
    const b = backend({
      get_inventory: ({ petId }) => stockItem(petId, 'Rex', 10),
      place_order: reject('insufficient_stock', 'Rex (#1) has 3 in stock; 5 more were asked for'),
    });
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await chooseRex();
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '5');
    await userEvent.click(screen.getByTestId('sell-now'));
    const alert = await screen.findByTestId('error-alert');
    expect(alert).toHaveTextContent('Rex (#1) has 3 in stock; 5 more were asked for');
    expect(alert).toHaveTextContent('Not enough in stock for that: add stock first, or take fewer.');
    expect(b.argsOf('place_order')[0].order).toMatchObject({ petId: 1, quantity: 5, complete: true });
  });

  it('does not call place_order without a pet or with a quantity out of bounds', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.click(screen.getByTestId('place-order'));
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('Choose a pet first');
    await chooseRex();
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '10001');
    await userEvent.click(screen.getByTestId('place-order'));
    expect(await screen.findByText(/from 1 to 10,000/)).toBeInTheDocument();
    expect(b.countOf('place_order')).toBe(0);
  });

  it('shows the pet’s price and the line total; more than its stock is flagged before sending', async () => {
    const b = backend();
    await shop.refresh();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await chooseRex();
    expect(screen.getByTestId('order-unit-price')).toHaveTextContent('€12.50 each');
    await waitFor(() => expect(screen.getByTestId('order-panel-stock')).toHaveTextContent('3 in stock'));
    expect(screen.getByTestId('order-total')).toHaveTextContent('€12.50');
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '2');
    expect(screen.getByTestId('order-total')).toHaveTextContent('€25.00');
    await userEvent.clear(qty);
    await userEvent.type(qty, '5');
    const warning = screen.getByTestId('order-stock-warning');
    expect(warning).toHaveTextContent('only 3 in stock');
    expect(within(warning).getByRole('link', { name: 'add stock' })).toHaveAttribute('href', '#inventory');
    expect(qty).toHaveAttribute('aria-invalid', 'true');
    await userEvent.click(screen.getByTestId('sell-now'));
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('Rex (#1) has 3 in stock; 5 asked for.');
    expect(b.countOf('place_order')).toBe(0);
  });

  it('the Pet field has the focus; Enter sells, and the field has it again for the next sale', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await waitFor(() => expect(screen.getByTestId('order-pet')).toHaveFocus());
    await chooseRex();
    await userEvent.keyboard('{Enter}');
    await waitFor(() =>
      expect(b.argsOf('place_order')).toEqual([{ order: { petId: 1, quantity: 1, shipDate: null, complete: true } }]),
    );
    await waitFor(() => expect(toast.message).toBe('Counter sale #13: 1 × Rex, €12.50'));
    await waitFor(() => expect(screen.getByTestId('order-pet')).toHaveFocus());
    expect(screen.getByTestId('order-pet')).toHaveValue('');
    // The sale shows on the Completed tab.
    await waitFor(() => expect(screen.getByTestId('tab-completed')).toHaveAttribute('aria-selected', 'true'));
  });

  it('a scan puts the pet into the panel, one of it, ready to sell with Enter', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    scan(BARCODE);
    await waitFor(() => expect(screen.getByTestId('order-pet-selected')).toHaveTextContent('Rex'));
    expect(b.argsOf('list_pets')).toContainEqual({ query: expect.objectContaining({ sku: BARCODE, limit: 1 }) });
    expect(screen.getByTestId('order-quantity')).toHaveValue(1);
    expect(screen.getByTestId('order-pet')).toHaveValue('Rex');
    await waitFor(() => expect(screen.getByTestId('order-pet')).toHaveFocus());
    await userEvent.keyboard('{Enter}');
    await waitFor(() => expect(b.argsOf('place_order')[0]?.order).toMatchObject({ petId: 1, quantity: 1, complete: true }));
  });

  it('an unknown scanned code says so; a pet that is not available is not put in', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    scan('999000111');
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('No pet has the barcode 999000111.');
    scan('T-3');
    await waitFor(() => expect(screen.getByTestId('error-alert')).toHaveTextContent('Tom (#3) has the barcode T-3 but is sold'));
    expect(screen.queryByTestId('order-pet-selected')).not.toBeInTheDocument();
    expect(b.countOf('place_order')).toBe(0);
  });

  it('Enter in the Pet field on text that is a barcode picks that pet', async () => {
    backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.type(screen.getByTestId('order-pet'), `${BARCODE}{Enter}`);
    await waitFor(() => expect(screen.getByTestId('order-pet-selected')).toHaveTextContent('Rex'));
    expect(screen.getByTestId('order-pet')).toHaveValue('Rex');
  });

  it('an order for later takes the customer’s name, phone and note; the lists show them and the prices', async () => {
    const b = backend();
    await shop.refresh();
    render(OrdersScreen);
    const row = await screen.findByTestId('order-row-11');
    expect(within(row).getByTestId('order-customer')).toHaveTextContent('Ana García · +34 600 123 456 · “Collects Saturday”');
    expect(screen.getByTestId('order-row-12')).toHaveTextContent('€12.50');
    expect(screen.getByTestId('order-total-12')).toHaveTextContent('€25.00');

    await chooseRex();
    await userEvent.click(screen.getByText(/For an order collected later/));
    await userEvent.type(screen.getByTestId('order-customer-name'), ' Ana ');
    await userEvent.type(screen.getByTestId('order-customer-phone'), '600 123');
    await userEvent.type(screen.getByTestId('order-note'), 'Saturday');
    await userEvent.click(screen.getByTestId('place-order'));
    await waitFor(() =>
      expect(b.argsOf('place_order')).toEqual([
        {
          order: {
            petId: 1,
            quantity: 1,
            shipDate: null,
            complete: false,
            customerName: 'Ana',
            customerPhone: '600 123',
            note: 'Saturday',
          },
        },
      ]),
    );
    await waitFor(() => expect(toast.message).toBe('Order #13 placed: 1 × Rex, €12.50'));
  });

  it('the search box asks both tabs for the customer or pet, once typing pauses', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.type(screen.getByTestId('order-search'), 'Ana');
    await waitFor(() => expect(b.argsOf('list_orders').at(-1)!.query).toMatchObject({ complete: false, q: 'Ana', offset: 0 }));
    expect(b.argsOf('list_orders').filter((a) => a.query.q === 'A' || a.query.q === 'An')).toEqual([]);
    await userEvent.click(screen.getByTestId('tab-completed'));
    await waitFor(() => expect(b.argsOf('list_orders').at(-1)!.query).toMatchObject({ complete: true, q: 'Ana' }));
  });

  it('a completed order’s receipt: shop, pet, total; Print prints', async () => {
    backend();
    await shop.refresh();
    const print = vi.spyOn(window, 'print').mockImplementation(() => {});
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.click(screen.getByTestId('tab-completed'));
    await userEvent.click(await screen.findByTestId('receipt-10'));
    const dialog = screen.getByRole('dialog', { name: 'Receipt for order #10' });
    const receipt = within(dialog).getByTestId('receipt');
    expect(receipt).toHaveTextContent('Paws & Co');
    expect(receipt).toHaveTextContent('Rex');
    expect(within(receipt).getByTestId('receipt-total')).toHaveTextContent('€12.50');
    expect(print).not.toHaveBeenCalled();
    await userEvent.click(within(dialog).getByTestId('receipt-print'));
    expect(print).toHaveBeenCalledTimes(1);
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByTestId('receipt')).not.toBeInTheDocument();
  });

  it('after a sale or a completion, Print receipt is one click: the receipt shows and prints', async () => {
    const b = backend();
    await shop.refresh();
    const print = vi.spyOn(window, 'print').mockImplementation(() => {});
    render(OrdersScreen);
    await userEvent.click(await screen.findByTestId('complete-order-12'));
    expect(await screen.findByTestId('last-sale')).toHaveTextContent('Order #12 completed: 2 × Rex, €25.00');
    await userEvent.click(screen.getByTestId('last-receipt'));
    expect(within(screen.getByTestId('receipt')).getByTestId('receipt-total')).toHaveTextContent('€25.00');
    await waitFor(() => expect(print).toHaveBeenCalledTimes(1));
    await userEvent.click(screen.getByRole('button', { name: 'Done' }));

    await chooseRex();
    await userEvent.click(screen.getByTestId('sell-now'));
    await waitFor(() => expect(screen.getByTestId('last-sale')).toHaveTextContent('Order #13 completed: 1 × Rex, €12.50'));
    expect(b.countOf('place_order')).toBe(1);
  });
});

describe('the Pet field', () => {
  it('Enter before the search has answered still picks the first match by name', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    // Typed and Enter at once: the debounced search has not gone out yet.
    await userEvent.type(screen.getByTestId('order-pet'), 'bel{Enter}');
    await waitFor(() => expect(screen.getByTestId('order-pet-selected')).toHaveTextContent('Bella'));
    expect(b.countOf('place_order')).toBe(0);
  });

  it('an unknown code or name typed into it says so and sells nothing', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.type(screen.getByTestId('order-pet'), '999000111{Enter}');
    expect(await screen.findByText('No pet has the barcode 999000111, and no available pet has that name.')).toBeInTheDocument();
    expect(b.countOf('place_order')).toBe(0);
  });
});

describe('in German and Spanish', () => {
  resetLanguageAfterEach();

  it('German: tabs, table, panel, stock, receipt and toasts', async () => {
    speak('de');
    backend();
    await shop.refresh();
    vi.spyOn(window, 'print').mockImplementation(() => {});
    render(OrdersScreen);
    const row = await screen.findByTestId('order-row-12');
    expect(screen.getByRole('heading', { level: 1, name: 'Bestellungen' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Verkaufen oder bestellen' })).toBeInTheDocument();
    expect(screen.getByTestId('tab-open')).toHaveTextContent('Offen');
    expect(screen.getByTestId('tab-cancelled')).toHaveTextContent('Storniert');
    expect(screen.getByRole('columnheader', { name: 'Menge' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Erstellt' })).toBeInTheDocument();
    expect(screen.getByTestId('order-total-12')).toHaveTextContent('25,00 €');
    expect(row).toHaveTextContent('12,50 € pro Stück');
    expect(screen.getByTestId('order-row-11')).toHaveTextContent('kein Preis');
    expect(screen.getByTestId('order-search')).toHaveAttribute('placeholder', 'Kunde oder Tier suchen…');
    expect(screen.getByTestId('sell-now')).toHaveTextContent('Jetzt verkaufen');
    expect(screen.getByTestId('place-order')).toHaveTextContent('Bestellen');
    expect(screen.getByRole('button', { name: 'Bestellung 12 abschließen' })).toHaveTextContent('Abschließen');
    expect(screen.getByText(/Enter verkauft/)).toBeInTheDocument();

    // The cancel question.
    await userEvent.click(screen.getByTestId('cancel-order-11'));
    const dialog = screen.getByRole('dialog', { name: 'Bestellung #11 stornieren?' });
    expect(dialog).toHaveTextContent('Bella bekommt 1 zurück in den Bestand und ist wieder verfügbar.');
    expect(within(dialog).getByTestId('confirm')).toHaveTextContent('Bestellung stornieren');
    await userEvent.keyboard('{Escape}');

    // The panel: more than the stock, with the link where German puts it.
    await chooseRex();
    await waitFor(() => expect(screen.getByTestId('order-panel-stock')).toHaveTextContent('3 im Bestand'));
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '5');
    const warning = screen.getByTestId('order-stock-warning');
    expect(warning).toHaveTextContent('nur 3 im Bestand: Bestand erhöhen oder weniger nehmen');
    expect(within(warning).getByRole('link', { name: 'Bestand erhöhen' })).toHaveAttribute('href', '#inventory');
    await userEvent.click(screen.getByTestId('sell-now'));
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('Rex (#1) hat 3 im Bestand; 5 gewünscht.');

    // Completing: the toast, its Undo, the bar with Print receipt, and the receipt itself.
    await userEvent.click(screen.getByTestId('complete-order-12'));
    await waitFor(() => expect(toast.message).toBe('Bestellung #12 abgeschlossen'));
    expect(toast.action?.label).toBe('Rückgängig');
    expect(await screen.findByTestId('last-sale')).toHaveTextContent('Bestellung #12 abgeschlossen: 2 × Rex, 25,00 €');
    await userEvent.click(screen.getByRole('button', { name: 'Beleg drucken' }));
    const receiptDialog = screen.getByRole('dialog', { name: 'Beleg für Bestellung #12' });
    const receipt = within(receiptDialog).getByTestId('receipt');
    expect(receipt).toHaveTextContent('Beleg #12');
    expect(receipt).toHaveTextContent('Summe');
    expect(receipt).toHaveTextContent('Vielen Dank!');
    expect(within(receiptDialog).getByTestId('receipt-print')).toHaveTextContent('Drucken');
    await userEvent.click(within(receiptDialog).getByRole('button', { name: 'Fertig' }));

    expectNoMissingKeys();
  });

  it('Spanish: the Completed tab, its receipt, an empty tab, and a scanned pet that is sold', async () => {
    speak('es');
    // No cancelled order: the tab's empty state.
    backend({ list_orders: ({ query }) => paged(query.cancelled ? [] : query.complete ? [DONE] : ORDERS) });
    await shop.refresh();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    expect(screen.getByRole('heading', { level: 1, name: 'Pedidos' })).toBeInTheDocument();
    expect(screen.getByTestId('sell-now')).toHaveTextContent('Vender ya');
    expect(screen.getByText(/Para un pedido que se recoge más tarde/)).toBeInTheDocument();

    await userEvent.click(screen.getByTestId('tab-completed'));
    await screen.findByTestId('order-row-10');
    expect(screen.getByTestId('tab-completed')).toHaveTextContent('Completados');
    expect(screen.getByRole('columnheader', { name: 'Completado' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Ticket del pedido 10' }));
    const receipt = within(screen.getByRole('dialog', { name: 'Ticket del pedido #10' })).getByTestId('receipt');
    expect(receipt).toHaveTextContent('Ticket #10');
    expect(receipt).toHaveTextContent('1 × 12,50 €');
    expect(receipt).toHaveTextContent('¡Gracias!');
    await userEvent.click(screen.getByRole('button', { name: 'Listo' }));

    await userEvent.click(screen.getByTestId('tab-cancelled'));
    expect(await screen.findByTestId('empty-state')).toHaveTextContent('No hay pedidos anulados');

    // A scan of a sold pet: its status in Spanish too.
    scan('T-3');
    await waitFor(() =>
      expect(screen.getByTestId('error-alert')).toHaveTextContent(
        'Tom (#3) tiene el código de barras T-3, pero está vendido: solo se pueden vender mascotas disponibles.',
      ),
    );

    expectNoMissingKeys();
  });

  it('follows a change of language at once', async () => {
    backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    expect(screen.getByRole('heading', { level: 1, name: 'Orders' })).toBeInTheDocument();
    speak('de');
    await waitFor(() => expect(screen.getByRole('heading', { level: 1, name: 'Bestellungen' })).toBeInTheDocument());
    expect(screen.getByTestId('tab-completed')).toHaveTextContent('Abgeschlossen');
    speak('es');
    await waitFor(() => expect(screen.getByTestId('tab-completed')).toHaveTextContent('Completados'));
    expectNoMissingKeys();
  });
});

import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { order, paged, pet, salesDay, shopSettings, stockItem } from '../src/dev/fixtures';
import { mockBackend, type Handler } from '../src/dev/mockBackend';
import { i18n, missingKeys, t } from '../src/lib/i18n.svelte';
import { lineTotal } from '../src/lib/money';
import { shop } from '../src/lib/shop.svelte';
import { toast } from '../src/lib/toast.svelte';
import OrdersScreen from '../src/screens/OrdersScreen.svelte';
import SalesScreen from '../src/screens/SalesScreen.svelte';
import { addDays, rangeProblem, today } from '../src/screens/sales/days';

// The Orders and Sales screens, the receipt and the chart in German and Spanish: every text
// they show has its translation (missingKeys stays empty), and a change of language shows at once.

const PETS = [pet(1, 'Rex', { price: '12.50', sku: '4006381333931' }), pet(2, 'Bella'), pet(3, 'Tom', { status: 'sold', sku: 'T-3' })];
const OPEN = [order(12, 1, { quantity: 2, unitPrice: '12.50', total: '25.00' }), order(11, 2, { customerName: 'Ana García' })];
const DONE = order(10, 1, { complete: true, unitPrice: '12.50', total: '12.50', completedAt: '2026-11-22T10:20:00Z' });
const TODAY = today();

function ordersBackend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_orders: ({ query }) => paged(query.cancelled ? [] : query.complete ? [DONE] : OPEN),
    list_pets: ({ query }) =>
      paged(
        PETS.filter(
          (p) =>
            (query.ids.length === 0 || query.ids.includes(p.id)) &&
            (!query.sku || p.sku === query.sku) &&
            (!query.q || p.name.toLowerCase().includes(query.q.toLowerCase())) &&
            (query.statuses.length === 0 || query.statuses.includes(p.status)),
        ),
      ),
    update_order: ({ id, patch }) => ({
      ...order(id, 1, { complete: patch.complete, completedAt: patch.complete ? '2026-11-22T10:30:00Z' : null }),
      unitPrice: '12.50',
      total: '25.00',
      quantity: 2,
    }),
    get_inventory: ({ petId }) => stockItem(petId, 'Rex', 3),
    place_order: ({ order: o }) => ({
      ...order(13, o.petId, o),
      unitPrice: PETS[o.petId - 1].price,
      total: lineTotal(PETS[o.petId - 1].price, o.quantity),
      completedAt: o.complete ? '2026-11-22T10:40:00Z' : null,
    }),
    get_shop_settings: () => shopSettings({ shopName: 'Paws & Co', currency: 'EUR' }),
    ...more,
  });
}

function salesBackend() {
  return mockBackend({
    get_shop_settings: () => shopSettings({ currency: 'EUR' }),
    sales_report: ({ from, to }) =>
      from === to && to === TODAY
        ? [salesDay(TODAY, 1, 1, '12.50')]
        : [salesDay(addDays(TODAY, -1), 2, 2, '25.00'), salesDay(TODAY, 1, 1, '12.50')],
  });
}

async function chooseRex() {
  await userEvent.type(screen.getByTestId('order-pet'), 'Rex');
  await userEvent.click(await screen.findByTestId('pet-option-1'));
  await screen.findByTestId('order-pet-selected');
}

beforeEach(() => {
  // jsdom draws nothing: the chart says so.
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
});

afterEach(() => {
  i18n.apply('en', ['en-US']);
  missingKeys.clear();
});

describe('the Orders screen in German and Spanish', () => {
  it('German: tabs, table, panel, stock, receipt and toasts', async () => {
    i18n.apply('de', ['de-DE']);
    ordersBackend();
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

    expect(missingKeys.size).toBe(0);
  });

  it('Spanish: the Completed tab, its receipt, an empty tab, and a scanned pet that is sold', async () => {
    i18n.apply('es', ['es-ES']);
    ordersBackend();
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
    for (const key of [...'T-3', 'Enter']) await userEvent.keyboard(key === 'Enter' ? '{Enter}' : key);
    await waitFor(() =>
      expect(screen.getByTestId('error-alert')).toHaveTextContent(
        'Tom (#3) tiene el código de barras T-3, pero está vendido: solo se pueden vender mascotas disponibles.',
      ),
    );

    expect(missingKeys.size).toBe(0);
  });

  it('follows a change of language at once', async () => {
    ordersBackend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    expect(screen.getByRole('heading', { level: 1, name: 'Orders' })).toBeInTheDocument();
    i18n.apply('de', ['de-DE']);
    await waitFor(() => expect(screen.getByRole('heading', { level: 1, name: 'Bestellungen' })).toBeInTheDocument());
    expect(screen.getByTestId('tab-completed')).toHaveTextContent('Abgeschlossen');
    i18n.apply('es', ['es-ES']);
    await waitFor(() => expect(screen.getByTestId('tab-completed')).toHaveTextContent('Completados'));
    expect(missingKeys.size).toBe(0);
  });
});

describe('the Sales screen in German and Spanish', () => {
  it('German: figures, range, summary with plurals, table and chart', async () => {
    i18n.apply('de', ['de-DE']);
    salesBackend();
    await shop.refresh();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    expect(screen.getByRole('heading', { level: 1, name: 'Umsatz' })).toBeInTheDocument();
    expect(screen.getByText('Einnahmen')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId('sales-today-revenue')).toHaveTextContent('12,50 €'));
    expect(screen.getByLabelText('Von')).toBe(screen.getByTestId('sales-from'));
    expect(screen.getByRole('button', { name: 'Heute' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '7 Tage' })).toBeInTheDocument();
    expect(screen.getByTestId('sales-export')).toHaveTextContent('CSV exportieren…');
    await waitFor(() =>
      expect(screen.getByText(/^14 Tage:/)).toHaveTextContent('14 Tage: 37,50 € aus 3 Bestellungen, 3 Stück.'),
    );
    expect(screen.getByRole('columnheader', { name: 'Tag' })).toBeInTheDocument();
    expect(screen.getByRole('rowheader', { name: 'Summe' })).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.getByTestId('sales-chart')).toHaveTextContent('Das Diagramm kann hier nicht gezeichnet werden'),
    );
    expect(screen.getByTestId('sales-chart').getAttribute('aria-label')).toMatch(/^Umsatz pro Tag vom .* insgesamt 37,50\s€\./);
    expect(rangeProblem('2026-02-02', '2026-02-01')).toBe('Der Von-Tag liegt nach dem Bis-Tag: Tauschen Sie beide oder wählen Sie neu.');
    expect(missingKeys.size).toBe(0);
  });

  it('Spanish: one day, one order, one unit; the many form; a range too long', async () => {
    i18n.apply('es', ['es-ES']);
    salesBackend();
    await shop.refresh();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    expect(screen.getByRole('heading', { level: 1, name: 'Ventas' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Hoy' }));
    await waitFor(() => expect(screen.getByText(/^1 día:/)).toHaveTextContent('1 día: 12,50 € de 1 pedido, 1 unidad.'));
    expect(screen.getByRole('button', { name: '30 días' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Ingresos' })).toBeInTheDocument();
    expect(t('sales.count.days', { count: 1_000_000, n: '1.000.000' })).toBe('1.000.000 días');

    const from = screen.getByTestId('sales-from');
    await userEvent.clear(from);
    await userEvent.type(from, addDays(TODAY, -400));
    expect(await screen.findByText(/Un informe abarca como máximo 366 días/)).toBeInTheDocument();
    expect(missingKeys.size).toBe(0);
  });
});

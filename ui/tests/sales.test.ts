import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { salesDay, shopSettings } from '../src/dev/fixtures';
import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import { notifyChange } from '../src/lib/changes';
import { t } from '../src/lib/i18n.svelte';
import { shop } from '../src/lib/shop.svelte';
import { toast } from '../src/lib/toast.svelte';
import SalesScreen from '../src/screens/SalesScreen.svelte';
import { addDays, daysIn, lastDays, rangeProblem, today } from '../src/screens/sales/days';
import { expectNoMissingKeys, resetLanguageAfterEach, speak } from './languages';

const TODAY = today();

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    get_shop_settings: () => shopSettings({ currency: 'EUR' }),
    sales_report: ({ from, to }) =>
      from === to && to === TODAY
        ? [salesDay(TODAY, 3, 4, '62.50')]
        : [salesDay(addDays(TODAY, -1), 2, 2, '25.00'), salesDay(TODAY, 3, 4, '62.50')],
    choose_file: ({ choice }) => `/home/shop/${choice.name}`,
    export_csv: () => 1234,
    ...more,
  });
}

beforeEach(() => {
  // jsdom draws nothing: the chart says so and the table carries the figures.
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
});

describe('Sales screen', () => {
  it('shows today’s takings and a table of the last 14 days', async () => {
    const b = backend();
    await shop.refresh();
    render(SalesScreen);
    await waitFor(() => expect(screen.getByTestId('sales-today-revenue')).toHaveTextContent('€62.50'));
    expect(screen.getByTestId('sales-today-orders')).toHaveTextContent('3');
    expect(screen.getByTestId('sales-today-units')).toHaveTextContent('4');

    const table = await screen.findByTestId('sales-table');
    const rows = within(table).getAllByRole('row');
    // Header, two days (newest first), total.
    expect(rows).toHaveLength(4);
    expect(rows[1]).toHaveTextContent('€62.50');
    expect(rows[2]).toHaveTextContent('€25.00');
    expect(screen.getByTestId('sales-total-revenue')).toHaveTextContent('€87.50');
    expect(screen.getByTestId('sales-chart')).toBeInTheDocument();

    expect(b.argsOf('sales_report')).toContainEqual({ from: TODAY, to: TODAY });
    expect(b.argsOf('sales_report')).toContainEqual({ from: addDays(TODAY, -13), to: TODAY });
  });

  it('the quick buttons ask for the last 7 and 30 days', async () => {
    const b = backend();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    await userEvent.click(screen.getByRole('button', { name: '7 days' }));
    await waitFor(() => expect(b.argsOf('sales_report')).toContainEqual({ from: addDays(TODAY, -6), to: TODAY }));
    expect(screen.getByRole('button', { name: '7 days' })).toHaveAttribute('aria-pressed', 'true');
    await userEvent.click(screen.getByRole('button', { name: '30 days' }));
    await waitFor(() => expect(b.argsOf('sales_report')).toContainEqual({ from: addDays(TODAY, -29), to: TODAY }));
  });

  it('says a range of more than 366 days is too long, before asking', async () => {
    const b = backend();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    const calls = b.countOf('sales_report');
    const from = screen.getByTestId('sales-from');
    await userEvent.clear(from);
    await userEvent.type(from, addDays(TODAY, -400));
    expect(await screen.findByText(/at most 366 days/)).toBeInTheDocument();
    expect(b.countOf('sales_report')).toBe(calls);
    expect(screen.queryByTestId('sales-table')).not.toBeInTheDocument();
  });

  it('a refused report names what could not be loaded', async () => {
    backend({ sales_report: reject('invalid_parameter', 'The time zone is unknown.', 400) });
    render(SalesScreen);
    const text = () => screen.queryAllByTestId('error-alert').map((a) => a.textContent).join(' ');
    await waitFor(() => expect(text()).toMatch(/Today's takings could not be loaded: The time zone is unknown/));
    expect(text()).toMatch(/The sales of .* could not be loaded/);
  });

  it('Export CSV asks where, writes the range’s orders and says where they went', async () => {
    const b = backend();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    await userEvent.click(screen.getByTestId('sales-export'));
    const from = addDays(TODAY, -13);
    await waitFor(() => expect(b.argsOf('export_csv')).toEqual([{ kind: 'orders', path: `/home/shop/orders-${from}-${TODAY}.csv`, from, to: TODAY }]));
    expect(b.argsOf('choose_file')).toEqual([{ choice: { kind: 'save', name: `orders-${from}-${TODAY}.csv` } }]);
    await waitFor(() => expect(toast.message).toMatch(`/home/shop/orders-${from}-${TODAY}.csv`));
  });

  it('a cancelled save dialog writes nothing', async () => {
    const b = backend({ choose_file: () => null });
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    await userEvent.click(screen.getByTestId('sales-export'));
    await waitFor(() => expect(b.countOf('choose_file')).toBe(1));
    expect(b.countOf('export_csv')).toBe(0);
    expect(toast.message).toBeNull();
  });

  it('refreshes after an order changes', async () => {
    const b = backend();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    const calls = b.countOf('sales_report');
    notifyChange({ orders: [1] });
    await waitFor(() => expect(b.countOf('sales_report')).toBe(calls + 2));
  });
});

describe('report days', () => {
  it('counts both ends, across months and DST', () => {
    expect(daysIn('2026-03-01', '2026-03-31')).toBe(31);
    expect(daysIn('2026-10-20', '2026-11-02')).toBe(14);
    expect(lastDays(14, '2026-11-22')).toEqual({ from: '2026-11-09', to: '2026-11-22' });
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
  });

  it('names what is wrong with a range', () => {
    expect(rangeProblem('2026-01-01', '2026-12-31')).toBeNull();
    expect(rangeProblem('2024-01-01', '2024-12-31')).toBeNull(); // 366 days, a leap year
    expect(rangeProblem('2025-01-01', '2026-01-02')).toMatch(/at most 366 days/);
    expect(rangeProblem('2026-02-02', '2026-02-01')).toMatch(/after the To day/);
    expect(rangeProblem('', '2026-02-01')).toMatch(/From/);
  });
});

describe('in German and Spanish', () => {
  resetLanguageAfterEach();

  it('German: figures, range, summary with plurals, table and chart', async () => {
    speak('de');
    backend();
    await shop.refresh();
    render(SalesScreen);
    await screen.findByTestId('sales-table');
    expect(screen.getByRole('heading', { level: 1, name: 'Umsatz' })).toBeInTheDocument();
    expect(screen.getByText('Einnahmen')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId('sales-today-revenue')).toHaveTextContent('62,50 €'));
    expect(screen.getByLabelText('Von')).toBe(screen.getByTestId('sales-from'));
    expect(screen.getByRole('button', { name: 'Heute' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '7 Tage' })).toBeInTheDocument();
    expect(screen.getByTestId('sales-export')).toHaveTextContent('CSV exportieren…');
    await waitFor(() =>
      expect(screen.getByText(/^14 Tage:/)).toHaveTextContent('14 Tage: 87,50 € aus 5 Bestellungen, 6 Stück.'),
    );
    expect(screen.getByRole('columnheader', { name: 'Tag' })).toBeInTheDocument();
    expect(screen.getByRole('rowheader', { name: 'Summe' })).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.getByTestId('sales-chart')).toHaveTextContent('Das Diagramm kann hier nicht gezeichnet werden'),
    );
    expect(screen.getByTestId('sales-chart').getAttribute('aria-label')).toMatch(/^Umsatz pro Tag vom .* insgesamt 87,50\s€\./);
    expect(rangeProblem('2026-02-02', '2026-02-01')).toBe('Der Von-Tag liegt nach dem Bis-Tag: Tauschen Sie beide oder wählen Sie neu.');
    expectNoMissingKeys();
  });

  it('Spanish: one day, one order, one unit; the many form; a range too long', async () => {
    speak('es');
    // One sale in all: the singular of days, orders and units.
    backend({ sales_report: () => [salesDay(TODAY, 1, 1, '12.50')] });
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
    expectNoMissingKeys();
  });
});

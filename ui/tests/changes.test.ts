import { emit } from '@tauri-apps/api/event';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import App from '../src/App.svelte';
import { category, localStatus, order, paged, pet, shopSettings, stockItem } from '../src/dev/fixtures';
import type { DataChanged } from '../src/lib/bindings/DataChanged';
import type { Pet } from '../src/lib/bindings/Pet';
import { CHANGE_DEBOUNCE_MS } from '../src/lib/changes';
import { listPets } from './fixtures/pets';
import { mockBackend } from './petsBackend';

/** The app's event: what changed, as src-tauri/src/changes.rs reads it from the feed. */
const changed = (c: Partial<DataChanged>): DataChanged => ({
  reset: false,
  pets: [],
  stock: [],
  categories: [],
  orders: [],
  settings: false,
  activity: false,
  ...c,
});

const settled = () => new Promise((r) => setTimeout(r, CHANGE_DEBOUNCE_MS + 150));

/** The shop of these tests: 30 pets (a page of 25 and more), each with 5 in stock. */
function shop() {
  const pets: Pet[] = Array.from({ length: 30 }, (_, i) =>
    pet(i + 1, `Pet ${String(i + 1).padStart(2, '0')}`, { price: '10.00' }),
  );
  const stock: Record<number, number> = Object.fromEntries(pets.map((p) => [p.id, 5]));
  const b = mockBackend({
    list_pets: listPets(pets),
    get_inventory: ({ petId }) => stockItem(petId, pets[petId - 1].name, stock[petId]),
    list_categories: () => paged([category(1, 'Dogs', 30)]),
    list_inventory: () => paged([], 0),
    list_orders: () => paged([]),
    get_status: () => localStatus(),
    get_sync_status: () => null,
    get_shop_settings: () => shopSettings(),
    place_order: ({ order: o }) => {
      stock[o.petId] -= o.quantity;
      // The app's event for the sale comes after its answer.
      setTimeout(() => void emit('petstore://changed', changed({ orders: [41], stock: [o.petId] })), 0);
      return order(41, o.petId, { quantity: o.quantity, complete: o.complete, total: '10.00' });
    },
  });
  return { pets, stock, b };
}

const stockOf = (id: number) => within(screen.getByTestId(`pet-row-${id}`)).getByTestId('pet-stock');

describe('data change events', () => {
  it('a counter sale from the Pets screen costs three calls: the sale, its row, the low-stock badge', async () => {
    const { b } = shop();
    render(App);
    await screen.findByTestId('pet-row-1');
    await waitFor(() => expect(stockOf(25)).toHaveTextContent('5'));
    await settled();
    const before = b.calls.length;

    await userEvent.click(screen.getByTestId('order-pet-1'));
    // The row brought its stock: the dialog asks for none.
    expect(screen.getByTestId('order-stock')).toHaveTextContent('5');
    await userEvent.click(screen.getByTestId('sell-now'));
    await waitFor(() => expect(stockOf(1)).toHaveTextContent('4'));
    await settled();

    // Before the event named the rows (and the rows carried their stock), a sale cost 59:
    // 51 get_inventory (the dialog's, and 25 per reload of the page, twice), 4 list_pets,
    // 2 list_categories, the badge and the sale.
    const sale = b.calls.slice(before).map((c) => c.cmd);
    expect(sale.sort()).toEqual(['list_inventory', 'list_pet_rows', 'place_order']);
    expect(b.argsOf('list_pet_rows').at(-1)!.query).toMatchObject({ ids: [1] });
  });

  it('the open sale dialog shows its row’s stock as it changes', async () => {
    const { stock } = shop();
    render(App);
    await screen.findByTestId('pet-row-2');
    await waitFor(() => expect(stockOf(2)).toHaveTextContent('5'));
    await userEvent.click(screen.getByTestId('order-pet-2'));
    expect(screen.getByTestId('order-stock')).toHaveTextContent('5');
    // Another till sells two: the row is read again, and the dialog follows it.
    stock[2] = 3;
    await emit('petstore://changed', changed({ stock: [2], orders: [50] }));
    await waitFor(() => expect(screen.getByTestId('order-stock')).toHaveTextContent('3'));
  });

  it('a burst of events reads the changed rows of the page once, and no page', async () => {
    const { stock, b } = shop();
    render(App);
    await screen.findByTestId('pet-row-1');
    await settled();
    const before = b.calls.length;

    // A script counts two pets' stock through the local API: three events, one update.
    stock[2] = 7;
    stock[3] = 0;
    await emit('petstore://changed', changed({ stock: [2] }));
    await emit('petstore://changed', changed({ stock: [3] }));
    await emit('petstore://changed', changed({ stock: [2, 3] }));
    await waitFor(() => expect(stockOf(3)).toHaveTextContent('0'));
    expect(stockOf(2)).toHaveTextContent('7');
    await settled();
    expect(b.calls.slice(before).map((c) => c.cmd).sort()).toEqual(['list_inventory', 'list_pet_rows']);
    expect(b.argsOf('list_pet_rows').at(-1)!.query).toMatchObject({ ids: [2, 3] });

    // A pet off the page (the 26th) changes stock: nothing on this page to read.
    const quiet = b.calls.length;
    await emit('petstore://changed', changed({ stock: [26] }));
    await settled();
    expect(b.calls.slice(quiet).map((c) => c.cmd)).toEqual(['list_inventory']);
  });

  it('a new pet reloads the page and the sidebar; a reset reloads everything', async () => {
    const { pets, b } = shop();
    render(App);
    await screen.findByTestId('pet-row-1');
    await settled();

    // A pet made elsewhere, first by name: the page again, and the counts.
    pets.push(pet(31, 'Aardvark'));
    const rows = b.countOf('list_pet_rows');
    const categories = b.countOf('list_categories');
    await emit('petstore://changed', changed({ pets: [31], stock: [31] }));
    await waitFor(() => expect(b.countOf('list_pet_rows')).toBe(rows + 1));
    await waitFor(() => expect(b.countOf('list_categories')).toBe(categories + 1));
    expect(b.argsOf('list_pet_rows').at(-1)!.query).toMatchObject({ ids: [], limit: 25, offset: 0 });

    // A reset (a backup restored, a seed): the page and the sidebar again.
    await settled();
    await emit('petstore://changed', changed({ reset: true }));
    await waitFor(() => expect(b.countOf('list_pet_rows')).toBe(rows + 2));
    await waitFor(() => expect(b.countOf('list_categories')).toBe(categories + 2));
  });

  it('a row that no longer fits the filter reloads the page', async () => {
    const { pets, b } = shop();
    render(App);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('filter-available'));
    await waitFor(() => expect(b.argsOf('list_pet_rows').at(-1)!.query).toMatchObject({ statuses: ['available'] }));
    await settled();

    // Pet 1 is sold elsewhere: read by id with the filter, it is not there, so the page again.
    pets[0] = { ...pets[0], status: 'sold' };
    const rows = b.countOf('list_pet_rows');
    await emit('petstore://changed', changed({ pets: [1], stock: [1] }));
    await waitFor(() => expect(screen.queryByTestId('pet-row-1')).not.toBeInTheDocument());
    expect(b.argsOf('list_pet_rows').slice(rows).map((a) => a.query.ids)).toEqual([[1], []]);
  });

  it('the Orders screen reloads for an order, not for a stock', async () => {
    const { b } = shop();
    render(App);
    await userEvent.click(screen.getByTestId('nav-orders'));
    await waitFor(() => expect(screen.getByTestId('nav-orders')).toHaveAttribute('aria-current', 'page'));
    await settled();
    const orders = b.countOf('list_orders');
    await emit('petstore://changed', changed({ stock: [3] }));
    await settled();
    expect(b.countOf('list_orders')).toBe(orders);
    await emit('petstore://changed', changed({ orders: [7] }));
    await waitFor(() => expect(b.countOf('list_orders')).toBe(orders + 1));
  });
});

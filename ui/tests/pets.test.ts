import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { category, paged, pet, stockItem } from '../src/dev/fixtures';
import type { Handler } from '../src/dev/mockBackend';
import { mockBackend, reject } from './petsBackend';
import PetsScreen from '../src/screens/PetsScreen.svelte';

const PETS = [pet(1, 'Rex', { price: '249.00', sku: 'AB-1' }), pet(2, 'Bella', { status: 'pending' }), pet(3, 'Tom', { categoryId: 2, status: 'sold' })];

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_pets: ({ query }) => {
      const items = PETS.filter((p) => query.statuses.length === 0 || query.statuses.includes(p.status));
      return paged(items.slice(0, query.limit ?? 20), items.length);
    },
    list_categories: () => paged([category(1, 'Dogs', 2), category(2, 'Cats', 1)]),
    ...more,
  });
}

/** The table's calls: its rows with their stock (the sidebar's "All pets" count asks list_pets). */
const tableQueries = (b: ReturnType<typeof backend>) =>
  b.argsOf('list_pet_rows').map((a) => a.query).filter((q) => q.limit === 25);

describe('Pets screen', () => {
  it('renders a row per pet with its status, and the category counts', async () => {
    backend();
    render(PetsScreen);
    const row = await screen.findByTestId('pet-row-1');
    expect(within(row).getByText('Rex')).toBeInTheDocument();
    // The category's column (the third); a narrow window shows it under the name instead.
    expect(row.children[2]).toHaveTextContent('Dogs');
    expect(screen.getByTestId('status-1')).toHaveTextContent('available');
    expect(screen.getByTestId('status-2')).toHaveTextContent('pending');
    expect(screen.getByTestId('status-3')).toHaveTextContent('sold');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('1–3 of 3');
    expect(screen.getByTestId('category-filter-1')).toHaveTextContent(/Dogs\s*2/);
    expect(screen.getByTestId('category-filter-all')).toHaveTextContent(/All pets\s*3/);
  });

  it('filters by status chip, server-side', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('filter-pending'));
    await waitFor(() => expect(screen.queryByTestId('pet-row-1')).not.toBeInTheDocument());
    expect(screen.getByTestId('pet-row-2')).toBeInTheDocument();
    expect(screen.getByTestId('filter-pending')).toHaveAttribute('aria-pressed', 'true');
    expect(tableQueries(b).at(-1)).toMatchObject({ statuses: ['pending'], offset: 0 });
  });

  it('searches after a pause in typing (debounced, sent as the loose search: a typo allowed, descriptions too)', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.type(screen.getByTestId('search'), 'rex');
    await waitFor(() => expect(tableQueries(b).at(-1)).toMatchObject({ search: 'rex', q: null }));
    // One search for the whole word, not one per key.
    expect(tableQueries(b).map((q) => q.search)).toEqual([undefined, 'rex']);
  });

  it('selects a category and sorts by a column header', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('category-filter-2'));
    await waitFor(() => expect(tableQueries(b).at(-1)).toMatchObject({ categoryId: 2 }));
    await userEvent.click(screen.getByTestId('sort-name'));
    await waitFor(() => expect(tableQueries(b).at(-1)).toMatchObject({ categoryId: 2, sort: '-name' }));
  });

  it('pages on the server: Next asks for the next 25', async () => {
    const many = Array.from({ length: 25 }, (_, i) => pet(i + 1, `Pet ${i + 1}`));
    const b = mockBackend({
      list_pets: ({ query }) => paged(query.limit === 1 ? [] : many, 1234),
      list_categories: () => paged([]),
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('1–25 of 1,234');
    expect(screen.getByTestId('pager-prev')).toBeDisabled();
    await userEvent.click(screen.getByTestId('pager-next'));
    await waitFor(() => expect(tableQueries(b).at(-1)).toMatchObject({ offset: 25, limit: 25 }));
  });

  it('a new filter starts again at the first page', async () => {
    const many = Array.from({ length: 25 }, (_, i) => pet(i + 1, `Pet ${i + 1}`));
    const b = mockBackend({
      list_pets: ({ query }) => paged(query.limit === 1 ? [] : many, 1234),
      list_categories: () => paged([]),
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('pager-next'));
    await waitFor(() => expect(tableQueries(b).at(-1)).toMatchObject({ offset: 25 }));
    await userEvent.click(screen.getByTestId('filter-sold'));
    await waitFor(() => expect(tableQueries(b).at(-1)).toMatchObject({ statuses: ['sold'], offset: 0 }));
    expect(tableQueries(b)).toHaveLength(3);
  });

  it('jumps to the last and back to the first page of a million pets in one request each', async () => {
    const TOTAL = 1_000_000;
    const b = mockBackend({
      // Rows numbered by position, so each page shows which slice the server was asked for.
      list_pets: ({ query }) => {
        const offset = query.offset ?? 0;
        const n = Math.max(0, Math.min(query.limit ?? 20, TOTAL - offset));
        return paged(Array.from({ length: n }, (_, i) => pet(offset + i + 1, `Pet ${offset + i + 1}`)), TOTAL);
      },
      list_categories: () => paged([]),
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('1–25 of 1,000,000');
    expect(screen.getByTestId('category-filter-all')).toHaveTextContent(/All pets\s*1,000,000/);
    expect(screen.getByTestId('pager-first')).toBeDisabled();
    expect(screen.getByTestId('pager-last')).toBeEnabled();

    await userEvent.click(screen.getByTestId('pager-last'));
    await screen.findByTestId('pet-row-1000000');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('999,976–1,000,000 of 1,000,000');
    expect(screen.getByTestId('pager-last')).toBeDisabled();
    expect(screen.getByTestId('pager-next')).toBeDisabled();
    expect(tableQueries(b).at(-1)).toMatchObject({ offset: 999_975, limit: 25 });

    await userEvent.click(screen.getByTestId('pager-first'));
    await screen.findByTestId('pet-row-1');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('1–25 of 1,000,000');
    // One request per jump: no walking through the pages in between.
    expect(tableQueries(b).map((q) => q.offset)).toEqual([0, 999_975, 0]);
  });

  it('shows the empty state with a hint when nothing matches', async () => {
    mockBackend({ list_pets: () => paged([]), list_categories: () => paged([]) });
    render(PetsScreen);
    await userEvent.click(await screen.findByTestId('filter-sold'));
    const empty = await screen.findByTestId('empty-state');
    expect(empty).toHaveTextContent('No pets match these filters');
    expect(within(empty).getByRole('button', { name: 'Clear filters' })).toBeInTheDocument();
  });

  it('shows the error message in an alert when the list fails', async () => {
    mockBackend({
      list_pets: reject('unreachable', 'Could not reach http://shop:8787: connection refused', 503),
      list_categories: () => paged([]),
    });
    render(PetsScreen);
    const alert = await screen.findByTestId('error-alert');
    expect(alert).toHaveAttribute('role', 'alert');
    expect(alert).toHaveTextContent('Could not reach http://shop:8787: connection refused');
  });

  it('creates a pet from the form; the server error shows in the form', async () => {
    let attempts = 0;
    const b = backend({
      create_pet: (args) => {
        attempts += 1;
        if (attempts === 1) return reject('validation_failed', 'name: must be at most 100 characters', 400)();
        return pet(9, args.pet.name);
      },
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('new-pet'));
    const dialog = screen.getByRole('dialog', { name: 'New pet' });
    await userEvent.type(within(dialog).getByTestId('pet-name'), 'Goldie');
    await userEvent.selectOptions(within(dialog).getByTestId('pet-category'), 'Cats');
    await userEvent.click(within(dialog).getByTestId('save-pet'));
    expect(await within(dialog).findByTestId('error-alert')).toHaveTextContent('name: must be at most 100 characters');
    // Enter in a field submits again.
    await userEvent.type(within(dialog).getByTestId('pet-name'), '{Enter}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(b.argsOf('create_pet').at(-1)).toEqual({
      pet: { name: 'Goldie', categoryId: 2, status: 'available', description: null },
    });
  });

  it('edits with replace_pet, and Escape closes the form without saving', async () => {
    const b = backend({ replace_pet: (args) => ({ ...PETS[0], ...args.pet }) });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('edit-pet-1'));
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('edit-pet-1'));
    const name = screen.getByTestId('pet-name');
    expect(name).toHaveValue('Rex');
    await userEvent.clear(name);
    await userEvent.type(name, 'Rexy');
    await userEvent.selectOptions(screen.getByTestId('pet-status'), 'sold');
    await userEvent.click(screen.getByTestId('save-pet'));
    await waitFor(() => expect(b.argsOf('replace_pet')).toHaveLength(1));
    expect(b.argsOf('replace_pet')[0]).toEqual({
      id: 1,
      // The price and barcode the form does not show yet go back as they were.
      pet: { name: 'Rexy', categoryId: 1, status: 'sold', description: null, price: '249.00', sku: 'AB-1' },
    });
  });

  it('deletes only after confirmation; a pet with orders and stock is not called "sold"', async () => {
    const b = backend({
      delete_pet: reject('pet_has_orders', 'Pet 1 has orders and cannot be deleted.'),
      get_inventory: ({ petId }) => stockItem(petId, 'Rex', 3),
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await waitFor(() => expect(within(screen.getByTestId('pet-row-1')).getByTestId('pet-stock')).toHaveTextContent('3'));
    await userEvent.click(screen.getByTestId('delete-pet-1'));
    expect(b.countOf('delete_pet')).toBe(0);
    const dialog = screen.getByRole('dialog', { name: 'Delete Rex?' });
    expect(dialog).toHaveTextContent('and its stock of 3 for good');
    await userEvent.click(screen.getByTestId('confirm'));
    const alert = await within(dialog).findByTestId('error-alert');
    expect(alert).toHaveTextContent('Rex (#1) cannot be deleted');
    expect(alert).toHaveTextContent('set its stock to 0');
    expect(alert).not.toHaveTextContent(/mark it sold/i);
    expect(b.argsOf('delete_pet')).toEqual([{ id: 1 }]);
  });

  it('places an order to collect later from a row, with the stock shown first', async () => {
    const b = backend({
      get_inventory: () => stockItem(1, 'Rex', 4),
      place_order: (args) => ({ id: 5, ...args.order, createdAt: '2026-11-22T10:15:00Z' }),
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('order-pet-1'));
    expect(await screen.findByTestId('order-stock')).toHaveTextContent('4');
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '2');
    await userEvent.click(screen.getByTestId('place-order'));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(b.argsOf('place_order')).toEqual([{ order: { petId: 1, quantity: 2, shipDate: null, complete: false } }]);
  });

  it('a pet that is not available cannot be ordered from its row: the buttons say so', async () => {
    const b = backend({ get_inventory: () => stockItem(3, 'Tom', 0, { status: 'sold' }) });
    render(PetsScreen);
    await screen.findByTestId('pet-row-3');
    await userEvent.click(screen.getByTestId('order-pet-3'));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/Tom \(#3\) is sold/)).toBeInTheDocument();
    expect(within(dialog).getByTestId('place-order')).toBeDisabled();
    expect(within(dialog).getByTestId('sell-now')).toBeDisabled();
    expect(b.countOf('place_order')).toBe(0);
  });
});

// The counter on the Pets screen (issue "The counter"): prices and stock in the rows, the
// sale dialog, barcodes scanned or typed, the pet form's price, barcode and first stock,
// and the first run's three steps.
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { category, paged, pet, stockItem } from '../src/dev/fixtures';
import type { Handler } from '../src/dev/mockBackend';
import { mockBackend, reject } from './petsBackend';
import { toast } from '../src/lib/toast.svelte';
import PetsScreen from '../src/screens/PetsScreen.svelte';
import { inventoryOf, listPets } from './fixtures/pets';
import { scan } from './scanner';

const PETS = [
  pet(1, 'Rex', { price: '12.50', sku: '4006381333931' }),
  pet(6, 'Nemo', { price: '4.50', sku: '4000000000006', categoryId: 2 }),
  pet(7, 'Tom', { status: 'sold', categoryId: 2 }),
];
const STOCK: Record<number, number> = { 1: 3, 6: 2, 7: 0 };

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_pets: listPets(PETS),
    list_categories: () => paged([category(1, 'Dogs', 1), category(2, 'Fish', 2)]),
    get_inventory: inventoryOf(PETS, STOCK),
    adjust_inventory: ({ petId, adjustment }) =>
      stockItem(petId, PETS.find((p) => p.id === petId)?.name ?? 'New pet', (STOCK[petId] ?? 0) + adjustment.delta),
    place_order: ({ order }) => ({ id: 41, ...order, createdAt: '2026-11-22T10:15:00Z', total: null }),
    ...more,
  });
}

const row = (id: number) => screen.getByTestId(`pet-row-${id}`);


describe('Pets screen at the counter', () => {
  it('shows each pet’s price and stock; a pet with none says "out of stock"', async () => {
    backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await waitFor(() => expect(within(row(1)).getByTestId('pet-stock')).toHaveTextContent('3'));
    expect(row(1)).toHaveTextContent('€12.50');
    expect(within(row(6)).getByTestId('pet-stock')).toHaveTextContent('2');
    expect(within(row(7)).getByTestId('pet-stock')).toHaveTextContent('0');
    expect(row(7)).toHaveTextContent('out of stock');
    expect(row(1)).not.toHaveTextContent('out of stock');
    // No price: a dash, not "€0.00".
    expect(row(7)).toHaveTextContent('—');
  });

  it('the row’s + and − ask for the reason, as the Inventory dialog does, and name the pet', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    const plus = within(row(1)).getByTestId('stock-plus');
    expect(plus).toHaveAccessibleName('Add one Rex');
    expect(within(row(1)).getByTestId('stock-minus')).toHaveAccessibleName('Remove one Rex');
    await waitFor(() => expect(plus).toBeEnabled());
    await userEvent.click(plus);
    // Nothing is changed by the click alone: the dialog asks for the reason first.
    const dialog = await screen.findByTestId('adjust-stock-dialog');
    expect(b.argsOf('adjust_inventory')).toEqual([]);
    expect(within(dialog).getByTestId('adjust-delta')).toHaveValue(1);
    await userEvent.click(within(dialog).getByTestId('save-adjustment'));
    expect(within(dialog).getByRole('alert')).toBeInTheDocument();
    expect(b.argsOf('adjust_inventory')).toEqual([]);
    await userEvent.type(within(dialog).getByTestId('adjust-reason'), 'delivery');
    await userEvent.click(within(dialog).getByTestId('save-adjustment'));
    await waitFor(() => expect(within(row(1)).getByTestId('pet-stock')).toHaveTextContent('4'));
    expect(b.argsOf('adjust_inventory')).toEqual([{ petId: 1, adjustment: { delta: 1, reason: 'delivery' } }]);
    await waitFor(() => expect(screen.queryByTestId('adjust-stock-dialog')).toBeNull());

    await userEvent.click(within(row(6)).getByTestId('stock-minus'));
    expect(within(await screen.findByTestId('adjust-stock-dialog')).getByTestId('adjust-delta')).toHaveValue(-1);
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(b.argsOf('adjust_inventory')).toHaveLength(1);
    // Nothing to take away from a pet with none.
    expect(within(row(7)).getByTestId('stock-minus')).toBeDisabled();
  });

  it('the keyboard’s Tab path from the search to a sale passes no stock button', async () => {
    backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    for (const button of [...screen.getAllByTestId('stock-plus'), ...screen.getAllByTestId('stock-minus')]) {
      expect(button).toHaveAttribute('tabindex', '-1');
    }
    // Tabbing through the first row reaches its Sell without landing on a stock button.
    screen.getByTestId('order-pet-1').focus();
    await userEvent.tab({ shift: true });
    expect(document.activeElement?.getAttribute('data-testid') ?? '').not.toMatch(/^stock-/);
  });

  it('the sale dialog shows the unit price and the total; Sell now (Enter) is a counter sale', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('order-pet-1'));
    const dialog = await screen.findByRole('dialog', { name: 'Sell Rex' });
    await waitFor(() => expect(within(dialog).getByTestId('order-stock')).toHaveTextContent('3'));
    expect(within(dialog).getByTestId('sale-unit-price')).toHaveTextContent('€12.50');
    expect(within(dialog).getByTestId('sale-total')).toHaveTextContent('€12.50');
    const qty = within(dialog).getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '2');
    expect(within(dialog).getByTestId('sale-total')).toHaveTextContent('€25.00');
    expect(within(dialog).getByTestId('sell-now')).toHaveClass('primary');
    await userEvent.type(qty, '{Enter}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(b.argsOf('place_order')).toEqual([{ order: { petId: 1, quantity: 2, shipDate: null, complete: true } }]);
  });

  it('flags a quantity above the stock before sending, and can add the missing stock', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-6');
    await userEvent.click(screen.getByTestId('order-pet-6'));
    const dialog = await screen.findByRole('dialog', { name: 'Sell Nemo' });
    await waitFor(() => expect(within(dialog).getByTestId('order-stock')).toHaveTextContent('2'));
    const qty = within(dialog).getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '3');
    expect(within(dialog).getByTestId('sale-over-stock')).toHaveTextContent('Nemo (#6) has 2 in stock.');
    expect(qty).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).getByTestId('sell-now')).toBeDisabled();
    await userEvent.type(qty, '{Enter}');
    expect(b.countOf('place_order')).toBe(0);

    await userEvent.click(within(dialog).getByTestId('sale-add-stock'));
    await waitFor(() => expect(within(dialog).getByTestId('order-stock')).toHaveTextContent('3'));
    expect(b.argsOf('adjust_inventory')).toEqual([{ petId: 6, adjustment: { delta: 1, reason: 'Added at the counter' } }]);
    expect(within(dialog).queryByTestId('sale-over-stock')).not.toBeInTheDocument();
    expect(within(dialog).getByTestId('sell-now')).toBeEnabled();
  });

  it('a refusal for stock names the pet by name and id', async () => {
    backend({ place_order: reject('insufficient_stock', 'Nemo (#6) has 2 in stock; 3 more were asked for') });
    render(PetsScreen);
    await screen.findByTestId('pet-row-6');
    await userEvent.click(screen.getByTestId('order-pet-6'));
    const dialog = await screen.findByRole('dialog', { name: 'Sell Nemo' });
    await waitFor(() => expect(within(dialog).getByTestId('order-stock')).toHaveTextContent('2'));
    await userEvent.click(within(dialog).getByTestId('sell-now'));
    expect(await within(dialog).findByTestId('error-alert')).toHaveTextContent('Nemo (#6) has 2 in stock');
  });

  it('a scanned barcode opens that pet’s sale; an unknown one says so', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    scan('4000000000006');
    const dialog = await screen.findByRole('dialog', { name: 'Sell Nemo' });
    expect(b.argsOf('list_pets').some((a) => a.query.sku === '4000000000006')).toBe(true);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    (document.activeElement as HTMLElement | null)?.blur();
    scan('4006381333999');
    expect(await screen.findByTestId('scan-message')).toHaveTextContent('No pet has the barcode 4006381333999');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('Enter in the search box with a pet’s barcode opens its sale; other text stays a search', async () => {
    const b = backend();
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    const search = screen.getByTestId('search');
    await userEvent.type(search, '4006381333931{Enter}');
    expect(await screen.findByRole('dialog', { name: 'Sell Rex' })).toBeInTheDocument();
    expect(search).toHaveValue('');
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    await userEvent.type(search, 'nem{Enter}');
    await waitFor(() => expect(b.argsOf('list_pet_rows').at(-1)!.query).toMatchObject({ search: 'nem', limit: 25 }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('a new pet gets its price, barcode and initial stock', async () => {
    const b = backend({ create_pet: ({ pet: p }) => pet(50, p.name, p) });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('new-pet'));
    const dialog = screen.getByRole('dialog', { name: 'New pet' });
    await userEvent.type(within(dialog).getByTestId('pet-name'), 'Goldie');
    await userEvent.type(within(dialog).getByTestId('pet-price-input'), '3,5');
    await userEvent.type(within(dialog).getByTestId('pet-sku-input'), '4000000000050{Enter}');
    const stock = within(dialog).getByTestId('pet-initial-stock-input');
    await userEvent.clear(stock);
    await userEvent.type(stock, '6');
    await userEvent.click(within(dialog).getByTestId('save-pet'));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(b.argsOf('create_pet')).toEqual([
      {
        pet: { name: 'Goldie', categoryId: null, status: 'available', description: null, price: '3.50', sku: '4000000000050' },
      },
    ]);
    expect(b.argsOf('adjust_inventory')).toEqual([{ petId: 50, adjustment: { delta: 6, reason: 'Initial stock' } }]);
    expect(toast.message).toBe('Goldie added');
  });

  it('a bad price and a barcode another pet has are said under their fields', async () => {
    const b = backend({
      create_pet: reject('duplicate_sku', 'Another pet (Rex, #1) has the barcode 4006381333931.'),
    });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('new-pet'));
    const dialog = screen.getByRole('dialog', { name: 'New pet' });
    await userEvent.type(within(dialog).getByTestId('pet-name'), 'Copy');
    await userEvent.type(within(dialog).getByTestId('pet-price-input'), '12.345');
    await userEvent.click(within(dialog).getByTestId('save-pet'));
    expect(within(dialog).getByTestId('pet-price-input')).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).getByText(/Enter a price like 12.50/)).toBeInTheDocument();
    expect(b.countOf('create_pet')).toBe(0);

    const price = within(dialog).getByTestId('pet-price-input');
    await userEvent.clear(price);
    await userEvent.type(price, '12');
    await userEvent.type(within(dialog).getByTestId('pet-sku-input'), '4006381333931');
    await userEvent.click(within(dialog).getByTestId('save-pet'));
    const sku = within(dialog).getByTestId('pet-sku-input');
    await waitFor(() => expect(sku).toHaveAttribute('aria-invalid', 'true'));
    expect(document.getElementById(sku.getAttribute('aria-describedby')!)).toHaveTextContent(
      'Another pet (Rex, #1) has the barcode',
    );
    expect(within(dialog).queryByTestId('error-alert')).not.toBeInTheDocument();
  });

  it('adds a category from the pet form and picks it', async () => {
    const b = backend({ create_category: ({ category: c }) => category(9, c.name) });
    render(PetsScreen);
    await screen.findByTestId('pet-row-1');
    await userEvent.click(screen.getByTestId('new-pet'));
    const dialog = screen.getByRole('dialog', { name: 'New pet' });
    await userEvent.click(within(dialog).getByTestId('pet-new-category'));
    await userEvent.type(within(dialog).getByTestId('pet-new-category-name'), 'Reptiles{Enter}');
    await waitFor(() => expect(within(dialog).getByTestId('pet-category')).toHaveDisplayValue('Reptiles'));
    expect(b.argsOf('create_category')).toEqual([{ category: { name: 'Reptiles', description: null } }]);
    // Enter there added the category; the pet is not saved yet.
    expect(screen.getByRole('dialog', { name: 'New pet' })).toBeInTheDocument();
  });

  it('the first run shows three steps, each with its button', async () => {
    mockBackend({
      list_pets: () => paged([]),
      list_categories: () => paged([]),
      create_category: ({ category: c }) => category(1, c.name),
    });
    render(PetsScreen);
    const steps = await screen.findByTestId('first-run');
    expect(steps).toHaveTextContent('1. Add categories');
    expect(steps).toHaveTextContent('2. Add pets');
    expect(steps).toHaveTextContent('3. Add stock');
    expect(within(steps).getByTestId('first-run-stock')).toHaveAttribute('href', '#inventory');
    await userEvent.click(within(steps).getByTestId('first-run-category'));
    expect(screen.getByRole('dialog', { name: 'New category' })).toBeInTheDocument();
    await userEvent.keyboard('{Escape}');
    await userEvent.click(within(steps).getByTestId('first-run-pet'));
    expect(screen.getByRole('dialog', { name: 'New pet' })).toBeInTheDocument();
  });

  it('the category sidebar says when it could not load, and Retry loads it again', async () => {
    let fail = true;
    mockBackend({
      list_pets: () => paged([pet(1, 'Rex')]),
      list_categories: () => {
        if (fail) return reject('busy', 'The database is busy.', 503)();
        return paged([category(1, 'Dogs', 1)]);
      },
      get_inventory: () => stockItem(1, 'Rex', 1),
    });
    render(PetsScreen);
    expect(await screen.findByTestId('categories-error')).toHaveTextContent('Could not load the categories: The database is busy.');
    fail = false;
    await userEvent.click(screen.getByTestId('categories-retry'));
    expect(await screen.findByTestId('category-filter-1')).toHaveTextContent('Dogs');
    expect(screen.queryByTestId('categories-error')).not.toBeInTheDocument();
  });
});

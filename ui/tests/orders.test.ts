import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { order, paged, pet, stockItem } from '../src/dev/fixtures';
import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import { toast } from '../src/lib/toast.svelte';
import OrdersScreen from '../src/screens/OrdersScreen.svelte';

const ORDERS = [order(12, 1, { quantity: 2 }), order(11, 2)];

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_orders: ({ query }) => paged(query.complete ? [order(10, 1, { complete: true })] : ORDERS),
    list_pets: ({ query }) =>
      paged([pet(1, 'Rex'), pet(2, 'Bella')].filter((p) => query.ids.length === 0 || query.ids.includes(p.id))),
    update_order: ({ id }) => order(id, 1, { complete: true }),
    cancel_order: () => null,
    get_inventory: ({ petId }) => stockItem(petId, 'Rex', 3),
    place_order: ({ order: o }) => order(13, o.petId, o),
    ...more,
  });
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

  it('Counter sale places the order with complete: true; a stock conflict is explained', async () => {
    const b = backend({ place_order: reject('insufficient_stock', 'Pet 1 has 3 in stock; 5 were ordered.') });
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.type(screen.getByTestId('order-pet'), 'Rex');
    await userEvent.click(await screen.findByTestId('pet-option-1'));
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '5');
    await userEvent.click(screen.getByTestId('counter-sale'));
    const alert = await screen.findByTestId('error-alert');
    expect(alert).toHaveTextContent('Pet 1 has 3 in stock; 5 were ordered.');
    expect(alert).toHaveTextContent('Not enough in stock for that: add stock first, or take fewer.');
    expect(b.argsOf('place_order')[0].order).toMatchObject({ petId: 1, quantity: 5, complete: true });
  });

  it('does not call place_order without a pet or with a quantity out of bounds', async () => {
    const b = backend();
    render(OrdersScreen);
    await screen.findByTestId('order-row-12');
    await userEvent.click(screen.getByTestId('place-order'));
    expect(await screen.findByTestId('error-alert')).toHaveTextContent('Choose a pet first');
    await userEvent.type(screen.getByTestId('order-pet'), 'Rex');
    await userEvent.click(await screen.findByTestId('pet-option-1'));
    const qty = screen.getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '10001');
    await userEvent.click(screen.getByTestId('place-order'));
    expect(await screen.findByText(/from 1 to 10,000/)).toBeInTheDocument();
    expect(b.countOf('place_order')).toBe(0);
  });
});

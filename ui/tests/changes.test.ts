import { emit } from '@tauri-apps/api/event';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import App from '../src/App.svelte';
import { category, localStatus, paged, pet } from '../src/dev/fixtures';
import { mockBackend } from '../src/dev/mockBackend';

describe('data change events', () => {
  it('a petstore://changed event refreshes the screen once per burst', async () => {
    let name = 'Rex';
    const b = mockBackend({
      list_pets: () => paged([pet(1, name)]),
      list_categories: () => paged([category(1, 'Dogs', 1)]),
      get_status: () => localStatus(),
      list_orders: () => paged([]),
    });
    render(App);
    await screen.findByText('Rex');
    const before = b.countOf('list_pets');

    // A script renames the pet through the local API; the app says "pets changed" (three times).
    name = 'Rex the Great';
    await emit('petstore://changed', 'pets');
    await emit('petstore://changed', 'inventory');
    await emit('petstore://changed', 'pets');
    expect(await screen.findByText('Rex the Great')).toBeInTheDocument();
    // Table and sidebar count: two list_pets calls for the whole burst.
    await new Promise((r) => setTimeout(r, 300));
    expect(b.countOf('list_pets') - before).toBe(2);

    // The same on another screen: navigation by the nav links.
    await userEvent.click(screen.getByTestId('nav-orders'));
    await waitFor(() => expect(screen.getByTestId('nav-orders')).toHaveAttribute('aria-current', 'page'));
    const ordersBefore = b.countOf('list_orders');
    await emit('petstore://changed', 'orders');
    await waitFor(() => expect(b.countOf('list_orders')).toBe(ordersBefore + 1));
  });
});

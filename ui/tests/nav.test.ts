import { render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';

import Nav from '../src/components/Nav.svelte';
import { paged, shopSettings, stockItem } from '../src/dev/fixtures';
import { mockBackend } from './petsBackend';
import { lowStock } from '../src/lib/lowStock.svelte';
import { shop } from '../src/lib/shop.svelte';

describe('Menu', () => {
  it('shows how many pets are below the shop\'s low-stock level on Inventory', async () => {
    const asked: (number | null)[] = [];
    mockBackend({
      get_shop_settings: () => shopSettings({ lowStockBelow: 3 }),
      list_inventory: ({ query }) => {
        asked.push(query.belowQuantity);
        return paged([stockItem(6, 'Nemo', 2)], 4);
      },
    });
    await shop.refresh();
    render(Nav);
    await lowStock.refresh();
    const badge = await screen.findByTestId('low-stock-badge');
    expect(badge).toHaveTextContent('4');
    expect(badge).toHaveAttribute('title', '4 pets are low on stock');
    expect(asked.at(-1)).toBe(3);
  });

  it('shows no badge when nothing is low', async () => {
    mockBackend({ list_inventory: () => paged([], 0) });
    render(Nav);
    await lowStock.refresh();
    await waitFor(() => expect(lowStock.count).toBe(0));
    expect(screen.queryByTestId('low-stock-badge')).toBeNull();
  });
});

import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import App from '../src/App.svelte';
import { installFakeBackend } from '../src/dev/fakeBackend';

describe('mock mode', () => {
  it('answers every screen from the fixtures, lists filtered and paged, with no error', async () => {
    installFakeBackend(0);
    render(App);
    expect(await screen.findByTestId('pet-row-2')).toHaveTextContent('Bella');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('1–25 of 44');
    await userEvent.click(screen.getByTestId('category-filter-3'));
    await waitFor(() => expect(screen.getByTestId('pager-range')).toHaveTextContent('1–7 of 7'));

    for (const [nav, row] of [
      ['nav-orders', 'order-row-6'],
      ['nav-inventory', 'inventory-row-1'],
      ['nav-categories', 'category-row-5'],
      ['nav-settings', 'api-key-row-till'],
    ]) {
      await userEvent.click(screen.getByTestId(nav));
      await screen.findByTestId(row);
      expect(screen.queryByTestId('error-alert')).not.toBeInTheDocument();
    }

    // A write is answered as a success would be: the dialog closes.
    await userEvent.click(screen.getByTestId('nav-inventory'));
    await userEvent.click(await screen.findByTestId('set-stock-1'));
    await userEvent.type(within(screen.getByRole('dialog')).getByTestId('stock-quantity'), '{Enter}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });
});

import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';

import { order, shopSettings } from '../src/dev/fixtures';
import { mockBackend } from '../src/dev/mockBackend';
import Receipt from '../src/components/Receipt.svelte';
import { formatDateTime, PROVISIONAL_ORDER_IDS } from '../src/lib/format';
import { shop } from '../src/lib/shop.svelte';

const SOLD = order(12, 1, {
  quantity: 2,
  complete: true,
  unitPrice: '12.50',
  total: '25.00',
  completedAt: '2026-11-22T10:20:00Z',
});

describe('Receipt', () => {
  it('lays out the shop, the order, the pet, quantity × unit price, the total and when', async () => {
    mockBackend({ get_shop_settings: () => shopSettings({ shopName: 'Paws & Co', currency: 'EUR' }) });
    await shop.refresh();
    render(Receipt, { order: SOLD, petName: 'Rex' });
    const receipt = screen.getByTestId('receipt');
    expect(receipt).toHaveTextContent('Paws & Co');
    expect(receipt).toHaveTextContent('Receipt #12');
    expect(receipt).toHaveTextContent('Rex');
    expect(receipt).toHaveTextContent('2 × €12.50');
    expect(within(receipt).getByTestId('receipt-total')).toHaveTextContent('€25.00');
    expect(within(receipt).getByTestId('receipt-time')).toHaveTextContent(formatDateTime('2026-11-22T10:20:00Z'));
  });

  it('in the shop’s currency; a sale without a price says so instead of a zero', async () => {
    mockBackend({ get_shop_settings: () => shopSettings({ shopName: 'Zoo Zürich', currency: 'CHF' }) });
    await shop.refresh();
    render(Receipt, { order: { ...SOLD, unitPrice: null, total: null, customerName: 'Ana' }, petName: 'Tom' });
    const receipt = screen.getByTestId('receipt');
    expect(receipt).toHaveTextContent('Zoo Zürich');
    expect(screen.getByTestId('receipt-total')).toHaveTextContent('—');
    expect(receipt).toHaveTextContent('no price');
    expect(receipt).toHaveTextContent('Customer: Ana');
  });

  it('a total in another currency is shown in it', async () => {
    mockBackend({ get_shop_settings: () => shopSettings({ currency: 'CHF' }) });
    await shop.refresh();
    render(Receipt, { order: SOLD, petName: 'Rex' });
    expect(screen.getByTestId('receipt-total')).toHaveTextContent(/CHF\s?25\.00/);
  });

  it('a sale taken offline reads with a number, and says the server numbers it when sent', async () => {
    mockBackend({ get_shop_settings: () => shopSettings({ shopName: 'Paws & Co', currency: 'EUR' }) });
    await shop.refresh();
    render(Receipt, { order: { ...SOLD, id: PROVISIONAL_ORDER_IDS + 2 }, petName: 'Rex' });
    const receipt = screen.getByTestId('receipt');
    expect(receipt).toHaveTextContent('Receipt offline 3');
    expect(receipt).not.toHaveTextContent('to send');
    expect(within(receipt).getByTestId('receipt-offline')).toHaveTextContent('gets its number when it reaches the server');
    // The till's moment of the sale, not when it reached the server.
    expect(within(receipt).getByTestId('receipt-time')).toHaveTextContent(formatDateTime('2026-11-22T10:20:00Z'));
  });
});

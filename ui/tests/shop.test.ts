import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { shopSettings } from '../src/dev/fixtures';
import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import { shop } from '../src/lib/shop.svelte';
import { toast } from '../src/lib/toast.svelte';
import ShopPanel from '../src/screens/settings/ShopPanel.svelte';
import { currencyLabel, currencyOptions, fieldOfError, timeZoneOptions, withoutFieldPrefix } from '../src/screens/settings/shopOptions';

function backend(more: Record<string, Handler> = {}) {
  let saved = shopSettings();
  return mockBackend({
    get_shop_settings: () => saved,
    save_shop_settings: ({ settings }) => (saved = settings),
    ...more,
  });
}

describe('Shop panel', () => {
  it('shows the saved settings, and saves what was chosen', async () => {
    const b = backend();
    render(ShopPanel);
    const name = await screen.findByTestId('shop-name-input');
    expect(name).toHaveValue('Petstore');
    expect(screen.getByTestId('shop-currency-select')).toHaveValue('EUR');
    expect(screen.getByTestId('shop-timezone-select')).toHaveValue('Europe/Berlin');
    expect(screen.getByTestId('shop-low-stock-input')).toHaveValue(5);

    await userEvent.clear(name);
    await userEvent.type(name, '  Paws & Co ');
    await userEvent.selectOptions(screen.getByTestId('shop-currency-select'), 'CHF');
    await userEvent.selectOptions(screen.getByTestId('shop-timezone-select'), 'Europe/Zurich');
    const low = screen.getByTestId('shop-low-stock-input');
    await userEvent.clear(low);
    await userEvent.type(low, '3');
    await userEvent.click(screen.getByTestId('shop-save'));

    await waitFor(() => expect(b.argsOf('save_shop_settings')).toHaveLength(1));
    expect(b.argsOf('save_shop_settings')[0]).toEqual({
      settings: { shopName: 'Paws & Co', currency: 'CHF', timeZone: 'Europe/Zurich', lowStockBelow: 3 },
    });
    await waitFor(() => expect(toast.message).toBe('Shop settings saved'));
    // The rest of the app is told: money in francs from now on.
    await waitFor(() => expect(shop.currency).toBe('CHF'));
    expect(name).toHaveValue('Paws & Co');
  });

  it('names the field of a refusal, beside that field', async () => {
    const b = backend({
      save_shop_settings: reject(
        'validation_failed',
        'settings.timeZone: timeZone must be an IANA time zone, like "Europe/Madrid"; got "Mars/Olympus"',
        422,
      ),
    });
    render(ShopPanel);
    await userEvent.click(await screen.findByTestId('shop-save'));
    const error = await screen.findByTestId('shop-timezone-error');
    expect(error).toHaveTextContent('Must be an IANA time zone, like "Europe/Madrid"; got "Mars/Olympus"');
    expect(screen.getByTestId('shop-timezone-select')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByTestId('shop-timezone-select')).toHaveAccessibleDescription(/IANA time zone/);
    expect(b.countOf('save_shop_settings')).toBe(1);
    expect(toast.message).toBeNull();
  });

  it('checks the name and the low-stock level before saving', async () => {
    const b = backend();
    render(ShopPanel);
    const name = await screen.findByTestId('shop-name-input');
    await userEvent.clear(name);
    const low = screen.getByTestId('shop-low-stock-input');
    await userEvent.clear(low);
    await userEvent.type(low, '-1');
    await userEvent.click(screen.getByTestId('shop-save'));
    expect(await screen.findByTestId('shop-name-error')).toHaveTextContent('Enter the shop’s name');
    expect(screen.getByTestId('shop-low-stock-error')).toHaveTextContent('A whole number, 0 or more');
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(b.countOf('save_shop_settings')).toBe(0);
  });

  it('offers the current currency even when it is not a common one', async () => {
    backend({ get_shop_settings: () => shopSettings({ currency: 'ISK' }) });
    render(ShopPanel);
    const select = await screen.findByTestId('shop-currency-select');
    expect(select).toHaveValue('ISK');
    expect(select.querySelectorAll('option')[0]).toHaveValue('ISK');
  });
});

describe('Shop options', () => {
  it('names currencies, keeps the common ones first and adds the current one', () => {
    expect(currencyLabel('EUR', 'en')).toBe('EUR — Euro');
    expect(currencyLabel('USD', 'en')).toBe('USD — US Dollar');
    const codes = currencyOptions('EUR', 'en').map((o) => o.code);
    expect(codes.slice(0, 4)).toEqual(['EUR', 'USD', 'GBP', 'CHF']);
    expect(codes).toEqual(expect.arrayContaining(['SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'JPY', 'CAD', 'AUD']));
    expect(currencyOptions('MXN', 'en')[0]).toEqual({ code: 'MXN', label: 'MXN — Mexican Peso' });
  });

  it('lists the time zones, with UTC and the current one', () => {
    const zones = timeZoneOptions('Etc/GMT+5');
    expect(zones).toContain('Europe/Berlin');
    expect(zones).toContain('UTC');
    expect(zones).toContain('Etc/GMT+5');
  });

  it('tells the field from the app’s message', () => {
    expect(fieldOfError('settings.currency: currency must be an ISO 4217 code')).toBe('currency');
    expect(fieldOfError('settings.shopName: name must not be blank')).toBe('shopName');
    expect(fieldOfError('settings.lowStockBelow: lowStockBelow must be at most 1000000')).toBe('lowStockBelow');
    expect(fieldOfError('the database is busy')).toBeNull();
    expect(withoutFieldPrefix('settings.currency: currency must be an ISO 4217 code')).toBe('Must be an ISO 4217 code');
    expect(withoutFieldPrefix('settings.shopName: name must not be blank')).toBe('Must not be blank');
  });
});

// The shop's settings every screen needs: the currency money is shown in, the shop's name
// on receipts, the low-stock level. Loaded when the app starts, again when they change
// (the Settings screen, or another till through the API).
import { getShopSettings } from './api';
import type { ShopSettings } from './bindings/ShopSettings';
import { onChange } from './changes';
import { asCommandError, type CommandError } from './errors';
import { formatMoney } from './format';

/** Until the shop's settings load: the API's defaults. */
export const DEFAULT_CURRENCY = 'EUR';
export const DEFAULT_LOW_STOCK_BELOW = 5;

class ShopStore {
  settings = $state.raw<ShopSettings | null>(null);
  error = $state.raw<CommandError | null>(null);

  get currency(): string {
    return this.settings?.currency ?? DEFAULT_CURRENCY;
  }

  get lowStockBelow(): number {
    return this.settings?.lowStockBelow ?? DEFAULT_LOW_STOCK_BELOW;
  }

  async refresh(): Promise<void> {
    try {
      this.settings = await getShopSettings();
      this.error = null;
    } catch (e) {
      this.error = asCommandError(e);
    }
  }

  /** Loads now and after every change of the settings; returns the function that stops. */
  start(): () => void {
    void this.refresh();
    return onChange(['settings'], () => void this.refresh());
  }
}

export const shop = new ShopStore();

/** An amount in the shop's currency: "€12.50". */
export function money(amount: string | null | undefined): string {
  return formatMoney(amount, shop.currency);
}

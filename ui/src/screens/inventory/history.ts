// The stock history's lines in a clerk's words: what moved the stock, and why.
import type { StockEntry } from '../../lib/bindings/StockEntry';
import { orderNumber } from '../../lib/format';
import { t } from '../../lib/i18n.svelte';

export function describeEntry(entry: StockEntry): string {
  const order = entry.orderId === null ? '' : orderNumber(entry.orderId);
  switch (entry.kind) {
    case 'adjusted':
      return entry.reason ?? t('inventory.entry.counted');
    case 'order_placed':
      return t('inventory.entry.orderPlaced', { order });
    case 'counter_sale':
      return t('inventory.entry.counterSale', { order });
    case 'order_changed':
      return t('inventory.entry.orderChanged', { order, reason: entry.reason ?? t('inventory.entry.anotherQuantity') });
    case 'order_completed':
      return t('inventory.entry.orderCompleted', { order });
    case 'order_cancelled':
      return t('inventory.entry.orderCancelled', { order });
  }
}

// The stock history's lines in a clerk's words: what moved the stock, and why.
import type { StockEntry } from '../../lib/bindings/StockEntry';
import { orderNumber } from '../../lib/format';

export function describeEntry(entry: StockEntry): string {
  const order = entry.orderId === null ? '' : orderNumber(entry.orderId);
  switch (entry.kind) {
    case 'adjusted':
      return entry.reason ?? 'Stock counted';
    case 'order_placed':
      return `Order ${order} placed: reserved`;
    case 'counter_sale':
      return `Sold at the counter (order ${order})`;
    case 'order_changed':
      return `Order ${order} changed: ${entry.reason ?? 'another quantity'}`;
    case 'order_completed':
      return `Order ${order} completed: collected`;
    case 'order_cancelled':
      return `Order ${order} cancelled: back in stock`;
  }
}

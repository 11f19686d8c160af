// How many pets are low on stock (below the shop's `lowStockBelow`), for the badge on
// Inventory in the menu: counted again after every change of a stock (a sale's too), of a
// pet (one made or deleted counts or stops counting), and when the shop's level changes.
import { listInventory } from './api';
import { onChange } from './changes';
import { shop } from './shop.svelte';

class LowStockStore {
  /** Pets below the level; null until counted, or when counting failed. */
  count = $state<number | null>(null);
  #seq = 0;

  async refresh(): Promise<void> {
    const seq = ++this.#seq;
    try {
      const page = await listInventory({ belowQuantity: shop.lowStockBelow, limit: 1 });
      if (seq === this.#seq) this.count = page.total;
    } catch {
      // The badge is a hint: the Inventory screen says what went wrong when opened.
      if (seq === this.#seq) this.count = null;
    }
  }

  /** Counts now and after each change; returns the function that stops. */
  start(): () => void {
    void this.refresh();
    return onChange(['inventory', 'pets', 'settings'], () => void this.refresh());
  }
}

export const lowStock = new LowStockStore();

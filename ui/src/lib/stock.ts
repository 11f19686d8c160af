// The stock of the pets a page shows. A pet has no stock field: each pet's count comes from
// get_inventory, asked for the page's rows together (a page is 25 rows).
import { getInventory } from './api';
import type { InventoryItem } from './bindings/InventoryItem';

/** The reason kept in the stock history for the Pets screen's −/+ buttons. */
export const COUNTER_REASON = 'Counted at the counter';

/** The stock record of each of these pets; a pet whose record could not be read is left out. */
export async function stocksOf(petIds: readonly number[]): Promise<Map<number, InventoryItem>> {
  const items = await Promise.all(petIds.map((id) => getInventory(id).catch(() => null)));
  return new Map(items.filter((i): i is InventoryItem => i !== null).map((i) => [i.petId, i]));
}

/** How a pet is named in messages: "Nemo (#6)". */
export function petLabel(pet: { name: string; id: number }): string {
  return `${pet.name} (#${pet.id})`;
}

// The mock backend for tests that show the Pets screen. The app answers `list_pet_rows`
// with its `list_pets` page, each pet with the stock `get_inventory` gives
// (src-tauri/src/commands/pets.rs), so a test's rows come from its own answers to those
// two: a pet with no stock answer shows none (null).
import { mockBackend as mock, type Args, type Handler } from '../src/dev/mockBackend';
import type { Paged } from '../src/lib/bindings/Paged';
import type { Pet } from '../src/lib/bindings/Pet';

export function withPetRows(handlers: Record<string, Handler>): Record<string, Handler> {
  const list = handlers.list_pets;
  const stockOf = handlers.get_inventory;
  if (!list || handlers.list_pet_rows) return handlers;
  return {
    ...handlers,
    list_pet_rows: async (args: Args) => {
      const page = (await list(args)) as Paged<Pet>;
      const items = await Promise.all(
        page.items.map(async (p) => {
          let stock: number | null = null;
          try {
            stock = stockOf ? ((await stockOf({ petId: p.id })) as { quantity: number }).quantity : null;
          } catch {
            stock = null;
          }
          return { ...p, stock };
        }),
      );
      return { ...page, items };
    },
  };
}

export function mockBackend(handlers: Record<string, Handler>, options: { latencyMs?: number } = {}) {
  return mock(withPetRows(handlers), options);
}

export { reject } from '../src/dev/mockBackend';

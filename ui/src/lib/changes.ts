// The "petstore://changed" event says what data changed, whoever changed it: this window,
// the local REST API, a script, another till. It names the rows (pets, their stock,
// categories, orders by id), and whether the activity log has new entries (a sale's is its
// order), so a screen reads again only those rows; a reset (a bulk
// load, a restored backup, too many changes at once) means everything may have changed.
// Screens subscribe with `onChange`. Events are debounced and merged, so a burst (a
// script's import, a sale's order and stock) costs one update, not one per event.
import { listen, type UnlistenFn } from '@tauri-apps/api/event';

import type { Change } from './bindings/Change';
import type { DataChanged } from './bindings/DataChanged';
import { debounce } from './debounce';

export const CHANGED_EVENT = 'petstore://changed';
export const CHANGE_DEBOUNCE_MS = 150;

/** What changed in a burst, merged: ids by kind, and whether everything may have. */
export type Changed = {
  reset: boolean;
  pets: ReadonlySet<number>;
  stock: ReadonlySet<number>;
  categories: ReadonlySet<number>;
  orders: ReadonlySet<number>;
  settings: boolean;
  activity: boolean;
};

/** What a screen may follow: a kind of the shop's data, or the activity log. */
export type Kind = Change | 'activity';

/** Whether `c` touches any of `kinds` (a reset touches all). */
export function touches(c: Changed, kinds: readonly Kind[]): boolean {
  if (c.reset) return true;
  return kinds.some((k) =>
    k === 'settings' || k === 'activity' ? c[k] : (k === 'inventory' ? c.stock : c[k]).size > 0,
  );
}

type Subscriber = { kinds: readonly Kind[]; refresh: (changed: Changed) => void };

const subscribers = new Set<Subscriber>();

function nothing() {
  return {
    reset: false,
    pets: new Set<number>(),
    stock: new Set<number>(),
    categories: new Set<number>(),
    orders: new Set<number>(),
    settings: false,
    activity: false,
  };
}

let pending = nothing();

function flush() {
  const changed: Changed = pending;
  pending = nothing();
  for (const s of subscribers) {
    if (touches(changed, s.kinds)) s.refresh(changed);
  }
}

const scheduleFlush = debounce(flush, CHANGE_DEBOUNCE_MS);

/**
 * Records a change and updates the interested screens once the burst is over. The app's
 * events come here; so does a screen's own write, as a hint that merges with the event the
 * app sends for it (and stands in for it if the window hears no events).
 */
export function notifyChange(change: Partial<DataChanged>): void {
  pending.reset ||= change.reset ?? false;
  pending.settings ||= change.settings ?? false;
  pending.activity ||= change.activity ?? false;
  for (const id of change.pets ?? []) pending.pets.add(id);
  for (const id of change.stock ?? []) pending.stock.add(id);
  for (const id of change.categories ?? []) pending.categories.add(id);
  for (const id of change.orders ?? []) pending.orders.add(id);
  scheduleFlush();
}

/**
 * Calls `refresh` with what changed after a change of any of `kinds` (or a reset). Returns
 * the unsubscribe function, so it can be returned from an `$effect` directly.
 */
export function onChange(kinds: readonly Kind[], refresh: (changed: Changed) => void): () => void {
  const s = { kinds, refresh };
  subscribers.add(s);
  return () => subscribers.delete(s);
}

/** Starts listening to the app's change events; call once, when the app mounts. */
export async function startChangeListener(): Promise<UnlistenFn> {
  const unlisten = await listen<DataChanged>(CHANGED_EVENT, (event) => notifyChange(event.payload));
  return () => {
    scheduleFlush.cancel();
    unlisten();
  };
}

/** Every kind of the shop's data (settings aside). */
export const ALL_CHANGES: readonly Change[] = ['pets', 'categories', 'orders', 'inventory'];

/** The category sidebar's concern: the categories, and their pets' counts (a pet made, moved or deleted). */
export const SIDEBAR_CHANGES: readonly Change[] = ['categories', 'pets'];

// The "petstore://changed" event says data changed, whoever changed it: this window, the
// local REST API, a script. Screens subscribe with `onChange` and refresh what they show.
// Events are debounced so a burst (a script's import, a seed) costs one refresh, not one
// per row.
import { listen, type UnlistenFn } from '@tauri-apps/api/event';

import type { Change } from './bindings/Change';
import { debounce } from './debounce';

export const CHANGED_EVENT = 'petstore://changed';
export const CHANGE_DEBOUNCE_MS = 150;

type Subscriber = { kinds: readonly Change[]; refresh: () => void };

const subscribers = new Set<Subscriber>();
let pending = new Set<Change>();

function flush() {
  const changed = pending;
  pending = new Set();
  for (const s of subscribers) {
    if (s.kinds.some((k) => changed.has(k))) s.refresh();
  }
}

const scheduleFlush = debounce(flush, CHANGE_DEBOUNCE_MS);

/** Records a change and refreshes the interested screens once the burst is over. */
export function notifyChange(change: Change): void {
  pending.add(change);
  scheduleFlush();
}

/**
 * Calls `refresh` after a change of any of `kinds`. Returns the unsubscribe function, so it
 * can be returned from an `$effect` directly.
 */
export function onChange(kinds: readonly Change[], refresh: () => void): () => void {
  const s = { kinds, refresh };
  subscribers.add(s);
  return () => subscribers.delete(s);
}

/** Starts listening to the app's change events; call once, when the app mounts. */
export async function startChangeListener(): Promise<UnlistenFn> {
  const unlisten = await listen<Change>(CHANGED_EVENT, (event) => notifyChange(event.payload));
  return () => {
    scheduleFlush.cancel();
    unlisten();
  };
}

/** Every kind: most screens show data that any change can touch (an order changes a pet's status). */
export const ALL_CHANGES: readonly Change[] = ['pets', 'categories', 'orders', 'inventory'];

// Remote mode's sync with the server: where it stands (the status bar) and how many writes
// taken offline wait in the outbox (the badge). The app sends every change of it as the
// "petstore://sync" event; null means local mode, where there is nothing to sync.
import { listen } from '@tauri-apps/api/event';

import { getSyncStatus } from './api';
import type { Command } from './bindings/Command';
import type { SyncStatus } from './bindings/SyncStatus';
import { formatDelta, formatNumber } from './format';

export const SYNC_EVENT = 'petstore://sync';

class SyncStore {
  current = $state.raw<SyncStatus | null>(null);
  #heard = false;

  /** Asks for the status once and follows the event; returns the function that stops it. */
  start(): () => void {
    this.#heard = false;
    let stopped = false;
    let unlisten: (() => void) | undefined;
    listen<SyncStatus | null>(SYNC_EVENT, (event) => {
      this.#heard = true;
      this.current = event.payload;
    })
      .then((u) => (stopped ? u() : (unlisten = u)))
      .catch((e) => console.warn('Not listening to sync changes:', e));
    getSyncStatus()
      .then((s) => {
        // An event heard meanwhile is newer than this answer.
        if (!stopped && !this.#heard) this.current = s;
      })
      .catch((e) => console.warn('No sync status:', e));
    return () => {
      stopped = true;
      unlisten?.();
    };
  }
}

export const sync = new SyncStore();

/** "10:42" today, with the date before another day, in the user's locale. */
export function formatSince(iso: string, locale?: string, now = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const sameDay = d.toDateString() === now.toDateString();
  const options: Intl.DateTimeFormatOptions = sameDay ? { timeStyle: 'short' } : { dateStyle: 'medium', timeStyle: 'short' };
  return new Intl.DateTimeFormat(locale, options).format(d);
}

/** The status bar's words for where syncing stands. */
export function syncText(s: SyncStatus, locale?: string, now?: Date): string {
  switch (s.state) {
    case 'copying':
      return s.total === null
        ? `Copying the shop… ${formatNumber(s.done, locale)} pets`
        : `Copying the shop… ${formatNumber(s.done, locale)} of ${formatNumber(s.total, locale)} pets`;
    case 'catchingUp':
      return 'Catching up';
    case 'synced':
      return 'Synced';
    case 'offline':
      return `Offline since ${formatSince(s.since, locale, now)} — sales are kept and sent when the server answers`;
    case 'keyRefused':
      return 'The server refused the API key — change it in Settings';
  }
}

/** A queued write in words: "Sale of 2 × pet 7", "Cancelling order 12". */
export function describeCommand(c: Command, locale?: string): string {
  switch (c.kind) {
    case 'placeOrder':
      return `${c.order.complete ? 'Sale' : 'Order'} of ${formatNumber(c.order.quantity, locale)} × pet ${c.order.petId}`;
    case 'completeOrder':
      return `Completing order ${c.orderId}`;
    case 'cancelOrder':
      return `Cancelling order ${c.orderId}`;
    case 'adjustInventory': {
      const reason = c.adjustment.reason.trim();
      return `Stock of pet ${c.petId} ${formatDelta(c.adjustment.delta, locale)}${reason ? ` (${reason})` : ''}`;
    }
  }
}

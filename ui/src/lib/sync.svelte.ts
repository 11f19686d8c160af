// Remote mode's sync with the server: where it stands (the status bar) and how many writes
// taken offline wait in the outbox (the badge). The app sends every change of it as the
// "petstore://sync" event; null means local mode, where there is nothing to sync.
import { listen } from '@tauri-apps/api/event';

import { getSyncStatus } from './api';
import type { Command } from './bindings/Command';
import type { OutboxCounts } from './bindings/OutboxCounts';
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
      return `Offline since ${formatSince(s.since, locale, now)} · sales are kept`;
    case 'keyRefused':
      // A wrong key (401), a key that may only read, or this till's address refused (403):
      // the server's words are in the tooltip.
      return 'The server refuses this till — check the key and address in Settings';
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

/** Writes the server does not have yet, sent or refused: what leaving them asks about. */
export function unsent(counts: OutboxCounts | null | undefined): number {
  return counts ? counts.pending + counts.attention : 0;
}

/**
 * What quitting or switching to local mode leaves behind, in words: "3 sales or stock
 * changes have not reached the server yet (1 needs attention)." and where they go.
 */
export function unsentText(counts: OutboxCounts, locale?: string): string {
  const total = unsent(counts);
  const what = total === 1 ? '1 sale or stock change has' : `${formatNumber(total, locale)} sales or stock changes have`;
  const attention = counts.attention > 0 ? ` (${formatNumber(counts.attention, locale)} ${counts.attention === 1 ? 'needs' : 'need'} attention)` : '';
  return (
    `${what} not reached the server yet${attention}. ` +
    'They stay saved on this till and are sent when Petstore runs in remote mode with this server again and it answers.'
  );
}

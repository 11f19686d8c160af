// Remote mode's sync with the server: where it stands (the status bar) and how many writes
// taken offline wait in the outbox (the badge). The app sends every change of it as the
// "petstore://sync" event; null means local mode, where there is nothing to sync.
import { listen } from '@tauri-apps/api/event';

import { getSyncStatus } from './api';
import type { Command } from './bindings/Command';
import type { OutboxCounts } from './bindings/OutboxCounts';
import type { SyncStatus } from './bindings/SyncStatus';
import { formatDelta, formatNumber, orderNumber } from './format';
import { i18n, t } from './i18n.svelte';

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

/** "10:42" today, with the date before another day, in the language's locale. */
export function formatSince(iso: string, locale?: string, now = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const sameDay = d.toDateString() === now.toDateString();
  const options: Intl.DateTimeFormatOptions = sameDay ? { timeStyle: 'short' } : { dateStyle: 'medium', timeStyle: 'short' };
  return new Intl.DateTimeFormat(locale ?? i18n.locale, options).format(d);
}

/** The status bar's words for where syncing stands. */
export function syncText(s: SyncStatus, locale?: string, now?: Date): string {
  switch (s.state) {
    case 'copying': {
      const done = formatNumber(s.done, locale);
      return s.total === null
        ? t('app.sync.copying', { count: s.done, done })
        : t('app.sync.copyingOf', { count: s.total, done, total: formatNumber(s.total, locale) });
    }
    case 'catchingUp':
      return t('app.sync.catchingUp');
    case 'synced':
      return t('app.sync.synced');
    case 'offline':
      return t('app.sync.offline', { since: formatSince(s.since, locale, now) });
    case 'keyRefused':
      // A wrong key (401), a key that may only read, or this till's address refused (403):
      // the server's words are in the tooltip.
      return t('app.sync.keyRefused');
  }
}

/**
 * A queued write in words, by the name of its pet where the till knows it: "Sale of 2 ×
 * Rex", "Cancelling order #12 (Rex)"; "pet 7" only for a pet the till no longer has.
 */
export function describeCommand(c: Command, locale?: string, petName?: string | null): string {
  const pet = (petId: number) => petName || t('app.commands.petNumber', { petId });
  const of = petName ? t('app.commands.ofPet', { pet: petName }) : '';
  switch (c.kind) {
    case 'placeOrder': {
      const values = { quantity: formatNumber(c.order.quantity, locale), pet: pet(c.order.petId) };
      return c.order.complete ? t('app.commands.sale', values) : t('app.commands.order', values);
    }
    case 'completeOrder':
      return t('app.commands.complete', { order: orderNumber(c.orderId), of });
    case 'cancelOrder':
      return t('app.commands.cancel', { order: orderNumber(c.orderId), of });
    case 'adjustInventory': {
      const reason = c.adjustment.reason.trim();
      const values = { pet: pet(c.petId), delta: formatDelta(c.adjustment.delta, locale) };
      return reason ? t('app.commands.adjustWhy', { ...values, reason }) : t('app.commands.adjust', values);
    }
  }
}

/** Writes the server does not have yet, sent or refused: what leaving them asks about. */
export function unsent(counts: OutboxCounts | null | undefined): number {
  return counts ? counts.pending + counts.attention : 0;
}

/** "3 need attention": the writes the server refused, in the badge and the leaving question. */
export function attentionText(n: number, locale?: string): string {
  return t('app.status.attention', { count: n, n: formatNumber(n, locale) });
}

/**
 * What quitting or switching to local mode leaves behind, in words: "3 sales or stock
 * changes have not reached the server yet (1 needs attention)." and where they go.
 */
export function unsentText(counts: OutboxCounts, locale?: string): string {
  const total = unsent(counts);
  const changes = t('app.unsent.changes', { count: total, n: formatNumber(total, locale) });
  const sentence =
    counts.attention > 0
      ? t('app.unsent.sentenceAttention', { changes, attention: attentionText(counts.attention, locale) })
      : t('app.unsent.sentence', { changes });
  return `${sentence} ${t('app.unsent.where')}`;
}

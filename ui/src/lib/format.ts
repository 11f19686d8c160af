// Numbers and dates in the language shown (lib/i18n.svelte.ts). Every function takes an
// optional locale so the tests can pin one; the app passes none and gets `i18n.locale`,
// read as state, so what is shown follows a change of language at once.
import { i18n, t } from './i18n.svelte';

const current = (locale?: string) => locale ?? i18n.locale;

export function formatNumber(n: number, locale?: string): string {
  return new Intl.NumberFormat(current(locale)).format(n);
}

/** "1–25 of 1,234" for a page of `count` rows starting at `offset`; "0 of 0" when empty. */
export function formatRange(offset: number, count: number, total: number, locale?: string): string {
  if (count === 0) return t('common.rangeEmpty', { total: formatNumber(total, locale) });
  const first = formatNumber(offset + 1, locale);
  const last = formatNumber(offset + count, locale);
  return t('common.range', { first, last, total: formatNumber(total, locale) });
}

function parse(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A timestamp as local date and time, e.g. "Nov 22, 2026, 10:15 AM". */
export function formatDateTime(iso: string | null | undefined, locale?: string): string {
  const d = parse(iso);
  return d ? new Intl.DateTimeFormat(current(locale), { dateStyle: 'medium', timeStyle: 'short' }).format(d) : '—';
}

/** A timestamp as a local calendar date, e.g. "Nov 22, 2026". */
export function formatDate(iso: string | null | undefined, locale?: string): string {
  const d = parse(iso);
  return d ? new Intl.DateTimeFormat(current(locale), { dateStyle: 'medium' }).format(d) : '—';
}

/** "1 pet", "12 pets": a count with its noun (English plural with -s, all this UI needs). */
export function countOf(n: number, noun: string, locale?: string): string {
  return `${formatNumber(n, locale)} ${noun}${n === 1 ? '' : 's'}`;
}

/** A stock change with its sign, using a true minus sign so it reads well: "+3", "−2". */
export function formatDelta(delta: number, locale?: string): string {
  const abs = formatNumber(Math.abs(delta), locale);
  return delta > 0 ? `+${abs}` : delta < 0 ? `−${abs}` : abs;
}

/**
 * A date picker's "YYYY-MM-DD" as the RFC 3339 instant the API wants. Noon local time, so
 * the same calendar day shows back in any time zone a few hours either side.
 */
export function shipDateToIso(date: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date.trim());
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12, 0, 0);
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Orders a till took while its server could not be reached have ids from 2^52 until the server numbers them. */
export const PROVISIONAL_ORDER_IDS = 2 ** 52;

/**
 * An order's number as staff read it: "#12"; one taken offline that the server has not
 * numbered yet by the till's own count of those, "offline 3".
 */
export function orderNumber(id: number): string {
  return id >= PROVISIONAL_ORDER_IDS ? t('common.orderOffline', { n: id - PROVISIONAL_ORDER_IDS + 1 }) : `#${id}`;
}

/**
 * An amount of the API's (a decimal string, "12.50") in `currency` for the locale: "€12.50",
 * "12,50 €"; "—" when there is none. The string's cents stay exact up to 2^53.
 */
export function formatMoney(amount: string | null | undefined, currency: string, locale?: string): string {
  if (amount == null || amount === '') return '—';
  const n = Number(amount);
  if (!Number.isFinite(n)) return '—';
  return new Intl.NumberFormat(current(locale), { style: 'currency', currency }).format(n);
}

// Calendar days as the sales report takes them: "YYYY-MM-DD", counted in local time (the
// shop's clock is the till's), with no time of day to trip over at midnight or DST.
import { formatNumber } from '../../lib/format';
import { i18n, t } from '../../lib/i18n.svelte';

/** The most days one report covers (the API refuses more). */
export const MAX_REPORT_DAYS = 366;

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A local date as "YYYY-MM-DD". */
export function isoDay(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** "YYYY-MM-DD" as local midnight, or null when it is not a real day. */
export function parseDay(day: string): Date | null {
  const m = DAY.exec(day);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return isoDay(d) === day ? d : null;
}

/** Today in local time. */
export function today(now: Date = new Date()): string {
  return isoDay(now);
}

/** The day `n` days after `day` (before, when negative). */
export function addDays(day: string, n: number): string {
  const d = parseDay(day);
  if (!d) return day;
  d.setDate(d.getDate() + n);
  return isoDay(d);
}

/** How many days from `from` to `to`, both counted: 1 for the same day; 0 when `to` is before. */
export function daysIn(from: string, to: string): number {
  const a = parseDay(from);
  const b = parseDay(to);
  if (!a || !b) return 0;
  // Whole days by the calendar (UTC of the same dates), so a DST change counts no hour.
  const ms = Date.UTC(b.getFullYear(), b.getMonth(), b.getDate()) - Date.UTC(a.getFullYear(), a.getMonth(), a.getDate());
  return Math.max(0, Math.round(ms / 86_400_000) + 1);
}

/** The `n` days that end with `end`: [first, end]. */
export function lastDays(n: number, end: string): { from: string; to: string } {
  return { from: addDays(end, -(n - 1)), to: end };
}

/**
 * What is wrong with a range before the report is asked for, or null when it is fine; in the
 * language shown (call it where it is rendered, e.g. in a `$derived`).
 */
export function rangeProblem(from: string, to: string): string | null {
  if (!parseDay(from)) return t('sales.problem.noFrom');
  if (!parseDay(to)) return t('sales.problem.noTo');
  if (from > to) return t('sales.problem.reversed');
  const n = daysIn(from, to);
  if (n > MAX_REPORT_DAYS)
    return t('sales.problem.tooLong', { max: formatNumber(MAX_REPORT_DAYS), from, to, n: formatNumber(n) });
  return null;
}

/** A report day for people: "Sun, Nov 22, 2026" in the user's locale. */
export function formatDay(day: string, locale?: string, options: Intl.DateTimeFormatOptions = { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric' }): string {
  const d = parseDay(day);
  return d ? new Intl.DateTimeFormat(locale ?? i18n.locale, options).format(d) : day;
}

/** A short day for a chart's axis: "Nov 22". */
export function shortDay(day: string, locale?: string): string {
  return formatDay(day, locale, { month: 'short', day: 'numeric' });
}

// Prices as a clerk types them and as the API wants them: a decimal string with two
// fraction digits, "0.00" to "999999.99", never a float (a float's 0.1 + 0.2 is not 0.30).
// Arithmetic is on whole cents.
import { t } from './i18n.svelte';

export const MAX_PRICE_CENTS = 99_999_999;

/** Whole cents of the API's decimal string ("12.50" → 1250); null when not one. */
export function toCents(amount: string | null | undefined): number | null {
  const m = /^(\d{1,9})\.(\d{2})$/.exec(amount ?? '');
  return m ? Number(m[1]) * 100 + Number(m[2]) : null;
}

/** The API's decimal string of whole cents (1250 → "12.50"). */
export function fromCents(cents: number): string {
  const whole = Math.floor(cents / 100);
  return `${whole}.${String(cents % 100).padStart(2, '0')}`;
}

/** A price times a quantity, as the API computes an order's total; null without a price. */
export function lineTotal(price: string | null | undefined, quantity: number): string | null {
  const cents = toCents(price);
  return cents == null || !Number.isInteger(quantity) || quantity < 1 ? null : fromCents(cents * quantity);
}

export type PriceInput = { ok: true; price: string | null } | { ok: false; error: string };

/**
 * What a clerk typed into a price field: empty (no price), "12", "12.5", "12,50" (a decimal
 * comma, as much of Europe writes it). Anything else is refused with words that say why, in
 * the language shown.
 */
export function parsePrice(raw: string): PriceInput {
  const s = raw.trim().replace(/\s/g, '');
  if (s === '') return { ok: true, price: null };
  const m = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(s);
  if (!m) return { ok: false, error: t('errors.validation.priceFormat') };
  const cents = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  if (cents > MAX_PRICE_CENTS) return { ok: false, error: t('errors.validation.priceTooHigh') };
  return { ok: true, price: fromCents(cents) };
}

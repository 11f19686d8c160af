// The choices of the Shop panel and the words for its errors, apart from the component so
// they can be tested alone.
import { i18n, t } from '../../lib/i18n.svelte';

/** The currencies a shop here most likely uses, in this order; the current one is added if it is another. */
export const COMMON_CURRENCIES = [
  'EUR',
  'USD',
  'GBP',
  'CHF',
  'SEK',
  'NOK',
  'DKK',
  'PLN',
  'CZK',
  'HUF',
  'RON',
  'JPY',
  'CAD',
  'AUD',
  'NZD',
] as const;

/** "EUR — Euro" (the name in the language shown); the code alone where the webview has no name for it. */
export function currencyLabel(code: string, locale?: string): string {
  try {
    const name = new Intl.DisplayNames(locale ?? i18n.locale, { type: 'currency' }).of(code);
    return name && name !== code ? `${code} — ${name}` : code;
  } catch {
    return code;
  }
}

export function currencyOptions(current: string, locale?: string): { code: string; label: string }[] {
  const codes: string[] = [...COMMON_CURRENCIES];
  if (current && !codes.includes(current)) codes.unshift(current);
  return codes.map((code) => ({ code, label: currencyLabel(code, locale) }));
}

/** Every IANA time zone the webview knows, with `current` among them. */
export function timeZoneOptions(current: string): string[] {
  let zones: string[] = [];
  try {
    zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  } catch {
    zones = [];
  }
  // Some engines leave UTC out of the list, though a shop may well be set to it.
  const all = new Set(zones);
  all.add('UTC');
  if (current) all.add(current);
  return [...all].sort((a, b) => a.localeCompare(b));
}

export type ShopField = 'shopName' | 'currency' | 'timeZone' | 'lowStockBelow';

/** A field's label in the language shown: "Shop name". */
export function fieldLabel(field: ShopField): string {
  return t(`settings.shop.fields.${field}`);
}

/**
 * Which field a refusal of save_shop_settings is about. The app names it first, like
 * `settings.currency: currency must be an ISO 4217 code…`; null when it names none.
 */
export function fieldOfError(message: string): ShopField | null {
  const m = /^\s*(?:settings\.)?(shopName|currency|timeZone|lowStockBelow)\b/.exec(message);
  return m ? (m[1] as ShopField) : null;
}

/** The refusal without the field's technical name, which the field's label beside it says. */
export function withoutFieldPrefix(message: string): string {
  const rest = message
    .replace(/^\s*(?:settings\.)?(shopName|currency|timeZone|lowStockBelow)\s*:\s*/, '')
    // "currency must be…" under the Currency field: "Must be…".
    .replace(/^(?:name|shopName|currency|timeZone|lowStockBelow)\s+(?=must\b)/, '');
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}

export const MAX_SHOP_NAME = 100;
export const MAX_LOW_STOCK = 1_000_000;

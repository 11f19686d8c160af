// Checks done before calling, with the same bounds as the API (openapi.yaml): an order of 1
// to 10,000, stock of 0 to 1,000,000, a change of stock other than 0 and at most 1,000,000
// either way, a reason of 1 to 200 characters. A typo is caught where it was typed; the
// server checks again, and its message wins when it disagrees. The messages are in the
// language shown when the check is made (errors.validation in src/locales).

import { formatNumber } from './format';
import { t } from './i18n.svelte';

export const MAX_ORDER_QUANTITY = 10_000;
export const MAX_STOCK = 1_000_000;
export const MAX_REASON = 200;

/** An order quantity, or the message saying what is wrong with it. */
export function parseQuantity(value: number | null | undefined): number | string {
  if (value === null || value === undefined || Number.isNaN(value)) return t('errors.validation.quantityMissing');
  if (!Number.isInteger(value) || value < 1 || value > MAX_ORDER_QUANTITY)
    return t('errors.validation.quantityRange', { max: formatNumber(MAX_ORDER_QUANTITY) });
  return value;
}

/** A stock count, or the message saying what is wrong with it. */
export function parseStock(value: number | null | undefined): number | string {
  if (value === null || value === undefined || Number.isNaN(value)) return t('errors.validation.countMissing');
  if (!Number.isInteger(value) || value < 0 || value > MAX_STOCK)
    return t('errors.validation.countRange', { max: formatNumber(MAX_STOCK) });
  return value;
}

/** A stock adjustment's delta, or the message saying what is wrong with it. */
export function parseDelta(value: number | null | undefined): number | string {
  if (value === null || value === undefined || Number.isNaN(value)) return t('errors.validation.deltaMissing');
  if (!Number.isInteger(value) || value === 0 || Math.abs(value) > MAX_STOCK)
    return t('errors.validation.deltaInvalid');
  return value;
}

/** An adjustment's reason, trimmed, or the message saying what is wrong with it. */
export function parseReason(value: string): { reason: string } | string {
  const reason = value.trim();
  if (reason === '') return t('errors.validation.reasonMissing');
  if (reason.length > MAX_REASON) return t('errors.validation.reasonTooLong', { max: formatNumber(MAX_REASON) });
  return { reason };
}

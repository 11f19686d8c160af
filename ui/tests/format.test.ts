import { describe, expect, it } from 'vitest';

import { formatDelta, formatNumber, formatRange, shipDateToIso } from '../src/lib/format';
import { localeFor } from '../src/lib/i18n.svelte';
import { parseDelta, parseQuantity, parseReason, parseStock } from '../src/lib/validate';

describe('format', () => {
  it('shows a page range with grouped numbers', () => {
    expect(formatRange(0, 25, 1234, 'en-US')).toBe('1–25 of 1,234');
    expect(formatRange(1225, 9, 1234, 'en-US')).toBe('1,226–1,234 of 1,234');
    expect(formatRange(0, 0, 0, 'en-US')).toBe('0 of 0');
  });

  it('groups digits on a system with no language set (LANG=C), where ICU would not', () => {
    // What WebKitGTK reports under LANG=C.UTF-8: navigator.language "C".
    expect(localeFor('en', ['C'])).toBe('en');
    expect(localeFor('en', ['C.UTF-8', 'POSIX'])).toBe('en');
    expect(formatRange(0, 25, 1_000_000, localeFor('en', ['C']))).toBe('1–25 of 1,000,000');
    expect(formatNumber(1_000_000, 'de-DE')).toBe('1.000.000');
  });

  it('signs stock changes with a true minus', () => {
    expect(formatDelta(3, 'en-US')).toBe('+3');
    expect(formatDelta(-1200, 'en-US')).toBe('−1,200');
  });

  it('turns a picked date into an RFC 3339 instant on that local day', () => {
    const iso = shipDateToIso('2026-11-25')!;
    expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(new Date(iso).getDate()).toBe(25);
    expect(shipDateToIso('25/11/2026')).toBeNull();
  });
});

describe('validate', () => {
  it('checks the API bounds before calling', () => {
    expect(parseQuantity(3)).toBe(3);
    expect(parseQuantity(0)).toMatch(/1 to 10,000/);
    expect(parseQuantity(10_001)).toMatch(/1 to 10,000/);
    expect(parseQuantity(null)).toMatch(/Enter a quantity/);
    expect(parseStock(0)).toBe(0);
    expect(parseStock(-1)).toMatch(/0 to 1,000,000/);
    expect(parseDelta(0)).toMatch(/other than 0/);
    expect(parseDelta(-2)).toBe(-2);
    expect(parseReason('   ')).toMatch(/Enter a reason/);
    expect(parseReason(' Damaged ')).toEqual({ reason: 'Damaged' });
  });
});

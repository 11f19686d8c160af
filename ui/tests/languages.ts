// What the tests of the UI in German and Spanish share: switching the window's language as
// a system of that language would (`i18n.apply(language, [its tag])`), going back to English
// after each test, and the checks that a screen shows no missing text and no English word.
import { afterEach, expect } from 'vitest';

import { i18n, missingKeys, type Language } from '../src/lib/i18n.svelte';

/** The system's tag each language is tried with. */
const TAGS: Record<Language, string> = { en: 'en-US', de: 'de-DE', es: 'es-ES' };

/** The languages besides English, for `it.each`. */
export const OTHER_LANGUAGES = ['de', 'es'] as const;

/**
 * Words of the English UI that no German or Spanish screen should show: the list the
 * end-to-end languages test (tests/e2e/languages.test.js, `ENGLISH`) looks for. Keep the two
 * equal.
 */
export const ENGLISH: readonly string[] = [
  'Save', 'Cancel', 'Search', 'Delete', 'Edit', 'Orders', 'Settings', 'Inventory', 'Categories',
  'Price', 'Quantity', 'Customer', 'Close', 'Complete', 'Completed', 'Available', 'Refresh',
  'Sell', 'Sale', 'Receipt', 'Print', 'History', 'Adjust', 'Description', 'Today',
  'Open', 'Cancelled', 'Loading', 'Shortcuts', 'Appearance', 'Language', 'Theme', 'Backup', 'Updates',
];

/** Shows the window in `language`, as on a system set to it. */
export function speak(language: Language) {
  i18n.apply(language, [TAGS[language]]);
}

/** Back to English, with no missing key remembered. */
export function resetLanguage() {
  speak('en');
  missingKeys.clear();
}

/** Goes back to English after each test of the file or `describe` block it is called in. */
export function resetLanguageAfterEach() {
  afterEach(resetLanguage);
}

/** Every text looked up so far was there in the language shown. */
export function expectNoMissingKeys() {
  expect([...missingKeys]).toEqual([]);
}

/** The English UI words (of `words`) in `container`'s text and its labels, titles and placeholders. */
export function englishLeft(container: Element = document.body, words: Iterable<string> = ENGLISH): string[] {
  const english = new Set(words);
  const texts: string[] = [];
  const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n.textContent ?? '');
  for (const el of container.querySelectorAll('[aria-label], [title], [placeholder]'))
    for (const a of ['aria-label', 'title', 'placeholder']) texts.push(el.getAttribute(a) ?? '');
  return texts.flatMap((text) => text.split(/[^A-Za-z]+/).filter((w) => english.has(w)));
}

/**
 * No English UI word of `words` is left in `container` (the whole page by default), and no
 * text looked up so far was missing in the language shown; `where` names the place in a failure.
 */
export function expectAllTranslated({
  container = document.body,
  words = ENGLISH,
  where,
}: { container?: Element; words?: Iterable<string>; where?: string } = {}) {
  expect(englishLeft(container, words), where).toEqual([]);
  expectNoMissingKeys();
}

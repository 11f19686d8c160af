// The window's language: English, German or Spanish, as the system's or as chosen in
// Settings (kept with the theme in the app's preferences, lib/preferences.ts, which the
// native menu and the notifications read too). This module only shows a language: it
// imports nothing of the app's, so anything (errors.ts, api.ts) may use `t`. Texts come from src/locales through i18next; dates, numbers and
// money go through `Intl` in `i18n.locale`, the system's own region when it speaks the
// language shown ("de-AT" on an Austrian till), the language alone otherwise.
//
// `t` reads the language's state, so a template or `$derived` that calls it shows the new
// language as soon as one is chosen, with no reload.
import i18next, { type TFunction } from 'i18next';

import { MESSAGES } from '../locales';
import type { Language } from './bindings/Language';
import type { LanguageChoice } from './bindings/LanguageChoice';

export type { Language, LanguageChoice };

export const LANGUAGES: readonly Language[] = ['en', 'de', 'es'];
export const LANGUAGE_CHOICES: readonly LanguageChoice[] = ['system', ...LANGUAGES];

/** The POSIX locale of a system with no language set (LANG=C): no language of its own. */
const POSIX = /^(c|posix)([._@-]|$)/i;

/** The language a tag such as "de-AT" or "es_ES.UTF-8" is in, when the app speaks it. */
function languageOf(tag: string): Language | null {
  if (POSIX.test(tag)) return null;
  const primary = tag.split(/[-_.@]/)[0].toLowerCase();
  return LANGUAGES.find((l) => l === primary) ?? null;
}

/** The first of the system's languages (most preferred first) the app speaks; English otherwise. */
export function systemLanguage(tags: readonly string[]): Language {
  for (const tag of tags) {
    const language = languageOf(tag);
    if (language) return language;
  }
  return 'en';
}

/**
 * The locale to format in for `language`: the system's tag for it when the system has one
 * ("de-AT", "es-MX"), so a region's own date order and separators show; the language alone
 * otherwise. Never the POSIX locale, whose ICU variant groups no digits ("1000000").
 */
export function localeFor(language: Language, tags: readonly string[]): string {
  for (const tag of tags) {
    if (languageOf(tag) !== language) continue;
    const bcp47 = tag.split(/[.@]/)[0].replace(/_/g, '-');
    try {
      return Intl.getCanonicalLocales(bcp47)[0];
    } catch {
      // Not a tag Intl knows ("de-XX-garbage"): the language alone will do.
    }
  }
  return language;
}

/** The system's languages, most preferred first, as the webview reports them. */
function systemTags(): readonly string[] {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language];
}

/**
 * Keys looked up but missing in the language shown. The types and tests/i18n.test.ts keep
 * this empty; should one slip through, the window shows the English text and the end-to-end
 * suite, which reads this set, fails.
 */
export const missingKeys = new Set<string>();
(globalThis as { __petstoreMissingKeys?: Set<string> }).__petstoreMissingKeys = missingKeys;

void i18next.init({
  lng: 'en',
  resources: Object.fromEntries(LANGUAGES.map((l) => [l, { translation: MESSAGES[l] }])),
  // No fallback language: a key a language lacks is reported, not silently shown in English
  // (parseMissingKeyHandler below still shows the English text).
  fallbackLng: false,
  // The resources are here already: init and every later call are synchronous.
  initAsync: false,
  // Svelte escapes what it renders; escaping here too would show "&amp;" in a pet's name.
  interpolation: { escapeValue: false },
  returnNull: false,
  parseMissingKeyHandler: (key, _defaultValue, options) => {
    missingKeys.add(`${i18next.language}:${key}`);
    const english = { ...options, lng: 'en' };
    return i18next.exists(key, english) ? i18next.t(key, english) : key;
  },
});

class I18n {
  /** What was chosen in Settings. */
  choice = $state<LanguageChoice>('system');
  /** What shows now: the choice, or the system's language for "system". */
  language = $state<Language>('en');
  /** The locale dates, numbers and money are formatted in. */
  locale = $state('en');

  /** Shows `choice` at once: every `t` and `Intl` format reads the new language. */
  apply(choice: LanguageChoice, tags: readonly string[] = systemTags()) {
    this.choice = choice;
    const language = choice === 'system' ? systemLanguage(tags) : choice;
    void i18next.changeLanguage(language);
    this.language = language;
    this.locale = localeFor(language, tags);
    if (typeof document !== 'undefined') document.documentElement.lang = this.locale;
  }

  /** The system's language: what "System" in Settings stands for. */
  get systemLanguage(): Language {
    return systemLanguage(systemTags());
  }
}

export const i18n = new I18n();

/**
 * A text of the UI in the language shown, by its key in src/locales: "common.status.sold",
 * or with values to fill in and a count that picks the plural form.
 * The keys are typed (src/locales/en), so a key that does not exist fails svelte-check.
 */
export const t = ((...args: unknown[]) => {
  // Read so that whatever renders a text re-renders when the language changes.
  void i18n.language;
  return (i18next.t as unknown as (...a: unknown[]) => string)(...args);
}) as unknown as TFunction;

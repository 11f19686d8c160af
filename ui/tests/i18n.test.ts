import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { mockBackend } from '../src/dev/mockBackend';
import { formatMoney, formatNumber } from '../src/lib/format';
import { i18n, LANGUAGES, localeFor, missingKeys, systemLanguage, t } from '../src/lib/i18n.svelte';
import { readPreferences } from '../src/lib/preferences';
import { MESSAGES } from '../src/locales';
import AppearancePanel from '../src/screens/settings/AppearancePanel.svelte';
import { resetLanguageAfterEach } from './languages';

type Tree = { [key: string]: string | Tree };

/** Every text of a language as "section.key" → text. */
function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out.set(key, v);
    else for (const [kk, vv] of flatten(v, key)) out.set(kk, vv);
  }
  return out;
}

const PLURAL = /_(zero|one|two|few|many|other)$/;

/** The keys as the code uses them: plural forms folded into their base key. */
function baseKeys(texts: Map<string, string>): Set<string> {
  return new Set([...texts.keys()].map((k) => k.replace(PLURAL, '')));
}

/** The {{values}} a text fills in. */
function values(text: string): string[] {
  return [...text.matchAll(/\{\{\s*(\w+)[^}]*\}\}/g)].map((m) => m[1]).sort();
}

const texts = Object.fromEntries(LANGUAGES.map((l) => [l, flatten(MESSAGES[l] as unknown as Tree)]));

describe('the translations', () => {
  resetLanguageAfterEach();

  it.each(['de', 'es'] as const)('%s has every text English has, and no other', (language) => {
    const en = baseKeys(texts.en);
    const other = baseKeys(texts[language]);
    expect([...en].filter((k) => !other.has(k)), 'missing').toEqual([]);
    expect([...other].filter((k) => !en.has(k)), 'not in English').toEqual([]);
  });

  it.each(LANGUAGES)('%s has every plural form its language needs, and only those', (language) => {
    const needed = new Intl.PluralRules(language).resolvedOptions().pluralCategories;
    const plurals = new Set([...texts[language].keys()].filter((k) => PLURAL.test(k)).map((k) => k.replace(PLURAL, '')));
    for (const base of plurals) {
      const forms = [...texts[language].keys()].filter((k) => k.replace(PLURAL, '') === base && k !== base);
      expect(forms.map((k) => PLURAL.exec(k)![1]).sort(), base).toEqual([...needed].sort());
    }
    // A plural in English is a plural everywhere.
    const englishPlurals = new Set([...texts.en.keys()].filter((k) => PLURAL.test(k)).map((k) => k.replace(PLURAL, '')));
    expect([...englishPlurals].filter((k) => !plurals.has(k))).toEqual([]);
  });

  it.each(['de', 'es'] as const)('%s fills in the values English does', (language) => {
    const wrong: string[] = [];
    for (const [key, text] of texts[language]) {
      const english = texts.en.get(key) ?? texts.en.get(key.replace(PLURAL, '_other'));
      if (english === undefined) continue;
      // A plural's "one" form may say "one" instead of {{count}}.
      const mine = values(text).filter((v) => v !== 'count');
      const theirs = values(english).filter((v) => v !== 'count');
      if (mine.join() !== theirs.join()) wrong.push(`${key}: ${mine} vs ${theirs}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each(['de', 'es'] as const)('%s translates: no text left empty', (language) => {
    expect([...texts[language]].filter(([, v]) => v.trim() === '').map(([k]) => k)).toEqual([]);
  });

  it('every key the code names exists in English', () => {
    // `t('a.b')` with a literal key; svelte-check types them too, this catches the ones in
    // markup attributes and plain strings the type check cannot see.
    const keys = baseKeys(texts.en);
    const sections = Object.keys(MESSAGES.en);
    const unknown: string[] = [];
    const sources = import.meta.glob<string>('../src/**/*.{ts,svelte}', { query: '?raw', import: 'default', eager: true });
    for (const [path, source] of Object.entries(sources)) {
      for (const m of source.matchAll(/\bt\(\s*'([a-zA-Z0-9_.]+)'/g)) {
        const key = m[1];
        if (sections.includes(key.split('.')[0]) && !keys.has(key) && ![...keys].some((k) => k.startsWith(`${key}.`)))
          unknown.push(`${path}: ${key}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});

describe('the language', () => {
  resetLanguageAfterEach();

  it("is the system's first language the app speaks, English otherwise", () => {
    expect(systemLanguage(['de-AT', 'en-US'])).toBe('de');
    expect(systemLanguage(['fr-FR', 'es-MX'])).toBe('es');
    expect(systemLanguage(['fr-FR'])).toBe('en');
    expect(systemLanguage(['C'])).toBe('en');
    expect(systemLanguage([])).toBe('en');
  });

  it("formats in the system's region when it speaks the language, the language alone otherwise", () => {
    expect(localeFor('de', ['de-AT', 'en-US'])).toBe('de-AT');
    expect(localeFor('de', ['de_CH.UTF-8'])).toBe('de-CH');
    expect(localeFor('es', ['de-DE'])).toBe('es');
    expect(localeFor('en', ['C.UTF-8'])).toBe('en');
  });

  it('changes every text, number and amount at once', () => {
    i18n.apply('de', ['de-DE']);
    expect(t('common.status.available')).toBe('verfügbar');
    expect(formatNumber(1234567)).toBe('1.234.567');
    expect(formatMoney('12.50', 'EUR')).toBe('12,50\u00a0€');
    expect(document.documentElement.lang).toBe('de-DE');
    i18n.apply('es', ['es-ES']);
    expect(t('common.status.sold')).toBe('vendido');
    i18n.apply('system', ['es-MX']);
    expect(i18n.language).toBe('es');
    expect(i18n.locale).toBe('es-MX');
    expect(missingKeys.size).toBe(0);
  });

  it('reports a key a language lacks, and shows the English text meanwhile', () => {
    i18n.apply('de', ['de-DE']);
    // @ts-expect-error not a key: what a typo in a dynamic key would do.
    expect(t('common.noSuchText')).toBe('common.noSuchText');
    expect([...missingKeys]).toEqual(['de:common.noSuchText']);
  });

  it('is chosen in Settings, shown at once and saved with the theme', async () => {
    const saved: unknown[] = [];
    mockBackend({
      get_preferences: () => ({ theme: 'dark', language: 'system' }),
      save_preferences: ({ preferences }) => {
        saved.push(preferences);
        return preferences;
      },
    });
    i18n.apply((await readPreferences()).language);
    render(AppearancePanel);
    await userEvent.selectOptions(screen.getByTestId('language'), 'de');
    await waitFor(() => expect(screen.getByText('Darstellung')).toBeInTheDocument());
    expect(saved).toEqual([{ theme: 'dark', language: 'de' }]);
    expect(screen.getByRole('option', { name: 'Español' })).toBeInTheDocument();
  });
});

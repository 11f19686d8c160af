// The window's preferences (theme and language), kept by the app in settings.json
// (`get_preferences` / `save_preferences`). Each is chosen on its own in Settings; a save
// writes both, the other as last read or saved, so choosing one never resets the other.
import { getPreferences, savePreferences } from './api';
import type { LanguageChoice } from './bindings/LanguageChoice';
import type { UiPreferences } from './bindings/UiPreferences';
import { i18n } from './i18n.svelte';

const SYSTEM: UiPreferences = { theme: 'system', language: 'system' };
let known = SYSTEM;

/** The saved preferences; the defaults (the system's look and language) when unreadable. */
export async function readPreferences(): Promise<UiPreferences> {
  try {
    known = { ...SYSTEM, ...(await getPreferences()) };
  } catch (e) {
    // A look or a language is never worth a till that does not open.
    console.warn('The window preferences could not be read; following the system:', e);
    known = SYSTEM;
  }
  return known;
}

/** Saves `change` with the other preferences as they are; a failed save is thrown. */
export async function savePreference(change: Partial<UiPreferences>): Promise<void> {
  const next = { ...known, ...change };
  await savePreferences(next);
  known = next;
}

/** Shows `choice` at once and saves it; a failed save is thrown (the choice still shows). */
export async function chooseLanguage(choice: LanguageChoice): Promise<void> {
  i18n.apply(choice);
  await savePreference({ language: choice });
}

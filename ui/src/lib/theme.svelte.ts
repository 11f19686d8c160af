// The window's light or dark look. The choice (Settings: System, Light, Dark) is kept by the
// app in settings.json (`get_preferences` / `save_preferences`); what shows is `data-theme`
// on <html>, always "light" or "dark", which styles/app.css turns into colours. "System"
// follows `prefers-color-scheme`, also when the system switches while the app is open.
import type { ThemeChoice } from './bindings/ThemeChoice';
import { savePreference } from './preferences';

export const THEME_CHOICES: readonly ThemeChoice[] = ['system', 'light', 'dark'];

const DARK_QUERY = '(prefers-color-scheme: dark)';

/** What the system asks for; light where the browser cannot say. */
function systemIsDark(): boolean {
  return globalThis.matchMedia?.(DARK_QUERY).matches ?? false;
}

class Theme {
  /** What was chosen. */
  choice = $state<ThemeChoice>('system');
  /** What shows now: the choice, or the system's look for "system". */
  look = $state<'light' | 'dark'>('light');
  #stopFollowing: (() => void) | undefined;

  /** Shows `choice` now, and keeps following the system while it is "system". */
  apply(choice: ThemeChoice) {
    this.choice = choice;
    this.#stopFollowing?.();
    this.#stopFollowing = undefined;
    if (choice === 'system') {
      const media = globalThis.matchMedia?.(DARK_QUERY);
      if (media) {
        const follow = () => this.#show(media.matches ? 'dark' : 'light');
        media.addEventListener('change', follow);
        this.#stopFollowing = () => media.removeEventListener('change', follow);
      }
      this.#show(systemIsDark() ? 'dark' : 'light');
    } else {
      this.#show(choice);
    }
  }

  #show(look: 'light' | 'dark') {
    this.look = look;
    document.documentElement.dataset.theme = look;
  }

  /** Shows `choice` at once and saves it; a failed save is thrown (the choice still shows). */
  async choose(choice: ThemeChoice): Promise<void> {
    this.apply(choice);
    await savePreference({ theme: choice });
  }
}

export const theme = new Theme();

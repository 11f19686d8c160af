// Which screen is showing. It lives in the URL's hash (#orders) so a reload, the dev mock
// and end-to-end tests can open a screen directly, and Back works as people expect.
import { t } from './i18n.svelte';

export type Screen = 'pets' | 'orders' | 'sales' | 'inventory' | 'categories' | 'activity' | 'settings';

/** The screens in the menu's order; each is named by `screenLabel`, in the language shown. */
export const SCREENS: readonly { id: Screen }[] = [
  { id: 'pets' },
  { id: 'orders' },
  { id: 'sales' },
  { id: 'inventory' },
  { id: 'categories' },
  { id: 'activity' },
  { id: 'settings' },
];

/** A screen's name in the menu ("Pets", "Tiere"); call it where it is shown. */
export function screenLabel(screen: Screen): string {
  return t(`app.screens.${screen}`);
}

export function screenFromHash(hash: string): Screen {
  const id = hash.replace(/^#\/?/, '');
  return SCREENS.find((s) => s.id === id)?.id ?? 'pets';
}

export const navigation = $state({ screen: screenFromHash(globalThis.location?.hash ?? '') });

/** Follows the hash; returns the function that stops following it. */
export function startNavigation(): () => void {
  const follow = () => {
    navigation.screen = screenFromHash(location.hash);
  };
  follow();
  window.addEventListener('hashchange', follow);
  return () => window.removeEventListener('hashchange', follow);
}

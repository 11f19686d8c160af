// Which screen is showing. It lives in the URL's hash (#orders) so a reload, the dev mock
// and end-to-end tests can open a screen directly, and Back works as people expect.

export type Screen = 'pets' | 'orders' | 'sales' | 'inventory' | 'categories' | 'settings';

export const SCREENS: readonly { id: Screen; label: string }[] = [
  { id: 'pets', label: 'Pets' },
  { id: 'orders', label: 'Orders' },
  { id: 'sales', label: 'Sales' },
  { id: 'inventory', label: 'Inventory' },
  { id: 'categories', label: 'Categories' },
  { id: 'settings', label: 'Settings' },
];

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

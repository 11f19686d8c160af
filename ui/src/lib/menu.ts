// The native menu bar's entries that act on the shop (macOS; src-tauri/src/menu.rs): the
// app sends each as the `menu` event with the entry's id, and the window does what the same
// shortcut or button would.
import { listen } from '@tauri-apps/api/event';

import { openApiDocs } from './api';
import { screenFromHash, SCREENS } from './navigation.svelte';
import { runShortcut } from './shortcuts.svelte';

/** What an entry of the menu asks for. */
export function runMenuEntry(id: string): void {
  if (SCREENS.some((s) => s.id === id)) runShortcut({ kind: 'screen', screen: screenFromHash(id) });
  else if (id === 'shortcuts') runShortcut({ kind: 'help' });
  else if (id === 'api-reference')
    openApiDocs().catch((e) => console.warn('The API reference could not be opened:', e));
}

/** Follows the menu; returns the function that stops. */
export async function followMenu(): Promise<() => void> {
  return listen<string>('menu', (event) => runMenuEntry(event.payload));
}

// The keyboard shortcuts: Ctrl+1…6 the screens in the menu's order, Ctrl+N a new pet, `/`
// the screen's search box, `?` the list of shortcuts (Esc, closing a dialog, is the
// dialog's own). Typing is never taken from a clerk: `/` and `?` count only outside text
// fields, and not inside a scanner's burst (lib/scanner.ts), whose characters come a few
// milliseconds apart; digits and Enter without Ctrl are never a shortcut. While a dialog
// is open, none of these apply: the dialog is modal.
import { t } from './i18n.svelte';
import { SCAN_GAP_MS } from './scanner';
import { SCREENS, screenLabel, type Screen } from './navigation.svelte';

export type ShortcutCommand =
  | { kind: 'screen'; screen: Screen }
  | { kind: 'new-pet' }
  | { kind: 'search' }
  | { kind: 'help' };

/** What a shortcut does, as its text's key under `app.shortcuts`; "goTo" names its screen. */
export type Shortcut =
  | { keys: readonly string[]; does: 'goTo'; screen: Screen }
  | { keys: readonly string[]; does: 'newPet' | 'search' | 'close' | 'save' | 'help' };

/** The list the `?` dialog shows, in the order people reach for them. */
export const SHORTCUTS: readonly Shortcut[] = [
  ...SCREENS.map((s, i) => ({ keys: ['Ctrl', String(i + 1)], does: 'goTo' as const, screen: s.id })),
  { keys: ['Ctrl', 'N'], does: 'newPet' },
  { keys: ['/'], does: 'search' },
  { keys: ['Esc'], does: 'close' },
  { keys: ['Enter'], does: 'save' },
  { keys: ['?'], does: 'help' },
];

/** What a shortcut does, in the language shown: "Go to Settings". */
export function shortcutText(s: Shortcut): string {
  return s.does === 'goTo' ? t('app.shortcuts.goTo', { screen: screenLabel(s.screen) }) : t(`app.shortcuts.${s.does}`);
}

/** A key's name on its keycap: Ctrl is "Strg" on German keyboards; the others stay. */
export function keyCap(key: string): string {
  return key === 'Ctrl' ? t('app.shortcuts.ctrl') : key;
}

const DIALOG = 'dialog[open], [role="dialog"], [role="alertdialog"]';
// Inputs that are switches, not text: `/` on a checkbox is still the shortcut.
const NOT_TEXT = ['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'];

/** A field the key would type into. */
export function typingIn(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT') return true;
  return target instanceof HTMLInputElement && !NOT_TEXT.includes(target.type);
}

type Key = Pick<KeyboardEvent, 'key' | 'code' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey' | 'target'>;

/** The screen's number from 1, from the key or, on layouts where digits need Shift, its code. */
function digit(e: Key): number | null {
  const m = /^(?:Digit|Numpad)([1-9])$/.exec(e.code) ?? /^([1-9])$/.exec(e.key);
  return m ? Number(m[1]) : null;
}

/**
 * What a key press asks for, or null. `sinceLastKeyMs`: the time since the key before it
 * (Shift not counted), to tell a scanner's burst from a person.
 */
export function shortcutOf(e: Key, context: { dialogOpen: boolean; sinceLastKeyMs: number }): ShortcutCommand | null {
  if (context.dialogOpen || e.altKey) return null;
  const command = e.ctrlKey || e.metaKey;
  if (command) {
    if (e.shiftKey) return null;
    const n = digit(e);
    if (n !== null) return n <= SCREENS.length ? { kind: 'screen', screen: SCREENS[n - 1].id } : null;
    if (e.key.toLowerCase() === 'n' || e.code === 'KeyN') return { kind: 'new-pet' };
    return null;
  }
  if (typingIn(e.target) || context.sinceLastKeyMs <= SCAN_GAP_MS) return null;
  // WebKitGTK names some shifted keys "Unidentified"; their code still says which.
  const key = e.key === 'Unidentified' && e.code === 'Slash' ? (e.shiftKey ? '?' : '/') : e.key;
  if (key === '/') return { kind: 'search' };
  if (key === '?') return { kind: 'help' };
  return null;
}

/**
 * Calls `run` with each shortcut pressed; returns the function that stops listening. It
 * listens after everything else (bubbling, on the window), so a field's or a dialog's own
 * keys and the scanner's listener (capturing) come first.
 */
export function listenForShortcuts(run: (command: ShortcutCommand) => void): () => void {
  let last = -Infinity;
  const onkeydown = (e: KeyboardEvent) => {
    if (e.key === 'Shift') return;
    const since = e.timeStamp - last;
    last = e.timeStamp;
    if (e.defaultPrevented || e.isComposing) return;
    const command = shortcutOf(e, { dialogOpen: document.querySelector(DIALOG) !== null, sinceLastKeyMs: since });
    if (command) {
      e.preventDefault();
      run(command);
    }
  };
  window.addEventListener('keydown', onkeydown);
  return () => window.removeEventListener('keydown', onkeydown);
}

/** What the shortcuts ask of the screens and the app: the list open, a new pet wanted. */
export const shortcuts = $state({ helpOpen: false, newPetWanted: false });

/** Ctrl+N: the Pets screen opens its form, now or when it mounts. */
export function wantNewPet(): void {
  shortcuts.newPetWanted = true;
  if (location.hash !== '#pets') location.hash = '#pets';
}

/** `/`: the current screen's search box (the first, in the main area), its text selected. */
export function focusSearch(): void {
  const box = document.querySelector<HTMLInputElement>('main input[type="search"]');
  box?.focus();
  box?.select();
}

/** The app's answer to each shortcut. */
export function runShortcut(command: ShortcutCommand): void {
  switch (command.kind) {
    case 'screen':
      location.hash = `#${command.screen}`;
      break;
    case 'new-pet':
      wantNewPet();
      break;
    case 'search':
      focusSearch();
      break;
    case 'help':
      shortcuts.helpOpen = true;
      break;
  }
}

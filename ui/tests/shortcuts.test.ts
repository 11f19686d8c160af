import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import ShortcutsDialog from '../src/components/ShortcutsDialog.svelte';
import { SCREENS } from '../src/lib/navigation.svelte';
import { listenForScans } from '../src/lib/scanner';
import { listenForShortcuts, runShortcut, shortcutOf, shortcuts, SHORTCUTS } from '../src/lib/shortcuts.svelte';

const AT_REST = { dialogOpen: false, sinceLastKeyMs: 1000 };

function key(init: Partial<KeyboardEvent>, target: EventTarget | null = document.body) {
  return { key: '', code: '', ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, target, ...init };
}

describe('shortcutOf', () => {
  it('takes Ctrl+1…7 to the screens in the menu order, and Ctrl+8 nowhere', () => {
    expect(SCREENS.map((_, i) => shortcutOf(key({ ctrlKey: true, key: String(i + 1), code: `Digit${i + 1}` }), AT_REST)))
      .toEqual(SCREENS.map((s) => ({ kind: 'screen', screen: s.id })));
    expect(shortcutOf(key({ ctrlKey: true, key: '8', code: 'Digit8' }), AT_REST)).toBeNull();
    // A layout whose digits need Shift still has the code (AZERTY: "&" on Digit1).
    expect(shortcutOf(key({ ctrlKey: true, key: '&', code: 'Digit1' }), AT_REST)).toEqual({ kind: 'screen', screen: 'pets' });
  });

  it('takes Ctrl+N to a new pet, also from inside a text field', () => {
    const field = document.createElement('input');
    expect(shortcutOf(key({ ctrlKey: true, key: 'n', code: 'KeyN' }, field), AT_REST)).toEqual({ kind: 'new-pet' });
    expect(shortcutOf(key({ ctrlKey: true, shiftKey: true, key: 'N', code: 'KeyN' }), AT_REST)).toBeNull();
  });

  it('takes / and ? only outside text fields', () => {
    expect(shortcutOf(key({ key: '/', code: 'Slash' }), AT_REST)).toEqual({ kind: 'search' });
    expect(shortcutOf(key({ key: '?', code: 'Slash', shiftKey: true }), AT_REST)).toEqual({ kind: 'help' });
    for (const tag of ['input', 'textarea', 'select']) {
      const field = document.createElement(tag);
      expect(shortcutOf(key({ key: '/' }, field), AT_REST)).toBeNull();
      expect(shortcutOf(key({ key: '?', shiftKey: true }, field), AT_REST)).toBeNull();
    }
    const checkbox = Object.assign(document.createElement('input'), { type: 'checkbox' });
    expect(shortcutOf(key({ key: '/' }, checkbox), AT_REST)).toEqual({ kind: 'search' });
  });

  it("reads WebKitGTK's Unidentified key by its code", () => {
    expect(shortcutOf(key({ key: 'Unidentified', code: 'Slash', shiftKey: true }), AT_REST)).toEqual({ kind: 'help' });
  });

  it('takes nothing while a dialog is open, nothing inside a burst, and never digits or Enter', () => {
    expect(shortcutOf(key({ ctrlKey: true, key: '2', code: 'Digit2' }), { ...AT_REST, dialogOpen: true })).toBeNull();
    expect(shortcutOf(key({ key: '?', shiftKey: true }), { ...AT_REST, dialogOpen: true })).toBeNull();
    expect(shortcutOf(key({ key: '/' }), { dialogOpen: false, sinceLastKeyMs: 8 })).toBeNull();
    for (const k of [...'0123456789', 'Enter', 'n', 'N']) expect(shortcutOf(key({ key: k }), AT_REST)).toBeNull();
    expect(shortcutOf(key({ altKey: true, key: '/' }), AT_REST)).toBeNull();
  });
});

describe('the shortcuts in the page', () => {
  let stop: () => void;
  beforeEach(() => {
    document.body.innerHTML = `<main><input id="name" type="text"><input id="find" type="search"><button id="b">b</button></main>`;
    stop = listenForShortcuts(runShortcut);
    shortcuts.helpOpen = false;
    shortcuts.newPetWanted = false;
  });
  afterEach(() => {
    stop();
    document.body.innerHTML = '';
  });

  it('/ focuses the screen search box; in a field it is typed', async () => {
    document.getElementById('b')!.focus();
    await userEvent.keyboard('/');
    expect(document.activeElement).toHaveAttribute('id', 'find');
    expect(document.getElementById('find')).toHaveValue('');

    const name = document.getElementById('name') as HTMLInputElement;
    await userEvent.click(name);
    await userEvent.keyboard('a/b?');
    expect(name).toHaveValue('a/b?');
    expect(document.activeElement).toBe(name);
    expect(shortcuts.helpOpen).toBe(false);
  });

  it('Ctrl+digits change the screen, Ctrl+N asks Pets for a new pet, ? opens the list', async () => {
    await userEvent.keyboard('{Control>}4{/Control}');
    expect(location.hash).toBe('#inventory');
    await userEvent.keyboard('{Control>}n{/Control}');
    expect(location.hash).toBe('#pets');
    expect(shortcuts.newPetWanted).toBe(true);
    // A person's next key comes later than a scanner's.
    await new Promise((r) => setTimeout(r, 80));
    await userEvent.keyboard('?');
    expect(shortcuts.helpOpen).toBe(true);
  });

  it("does not take a scanner's burst: the scan is read whole and nothing else happens", async () => {
    const scans: string[] = [];
    const stopScans = listenForScans((code) => scans.push(code));
    try {
      document.getElementById('b')!.focus();
      // A scanner types a few milliseconds apart; user-event types with no delay at all.
      await userEvent.keyboard('A/17?2{Enter}');
      expect(scans).toEqual(['A/17?2']);
      expect(document.activeElement).toHaveAttribute('id', 'b');
      expect(shortcuts.helpOpen).toBe(false);
      expect(location.hash).not.toBe('#inventory');
    } finally {
      stopScans();
    }
  });

  it('a person pressing / after a pause still gets the search box', async () => {
    document.getElementById('b')!.focus();
    await userEvent.keyboard('x');
    await new Promise((r) => setTimeout(r, 80));
    await userEvent.keyboard('/');
    expect(document.activeElement).toHaveAttribute('id', 'find');
  });
});

describe('Shortcuts dialog', () => {
  it('lists every shortcut and closes with Escape', async () => {
    const onclose = vi.fn();
    render(ShortcutsDialog, { onclose });
    const dialog = screen.getByRole('dialog', { name: 'Keyboard shortcuts' });
    expect(dialog.querySelectorAll('tbody tr')).toHaveLength(SHORTCUTS.length);
    expect(dialog).toHaveTextContent('Go to Settings');
    await userEvent.keyboard('{Escape}');
    expect(onclose).toHaveBeenCalled();
  });
});

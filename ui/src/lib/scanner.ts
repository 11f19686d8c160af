// A USB barcode scanner is a keyboard: it types the code's characters a few milliseconds
// apart, then Enter. Outside text fields, such a burst is a scan; in a text field the field
// gets the characters, and the field's own Enter decides (the pet picker and the search box
// look the code up as a barcode too), so typing is never taken from a clerk.
import { listPets } from './api';
import type { Pet } from './bindings/Pet';

/** Longest pause between two characters of one scan. People type 100 ms apart and more. */
export const SCAN_GAP_MS = 50;
/** Fewest characters of a code; shorter bursts are someone's fingers. */
export const SCAN_MIN_LENGTH = 3;

/** The characters of a burst, fed key by key; answers the code when Enter ends a scan. */
export class ScanBuffer {
  #chars = '';
  #last = -Infinity;

  key(key: string, at: number): string | null {
    // A scanner presses Shift for capitals, as a person does.
    if (key === 'Shift') return null;
    const quick = at - this.#last <= SCAN_GAP_MS;
    this.#last = at;
    if (key === 'Enter') {
      const code = quick && this.#chars.length >= SCAN_MIN_LENGTH ? this.#chars : null;
      this.#chars = '';
      return code;
    }
    if (key.length !== 1) {
      this.#chars = '';
      return null;
    }
    this.#chars = quick ? this.#chars + key : key;
    return null;
  }
}

/** A text field, where the characters are the field's. */
function editable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/**
 * Calls `onScan` with each code scanned while no text field has the focus (and no dialog
 * is open). Returns the function that stops listening.
 */
export function listenForScans(onScan: (code: string) => void): () => void {
  const buffer = new ScanBuffer();
  const onkeydown = (e: KeyboardEvent) => {
    if (e.ctrlKey || e.altKey || e.metaKey || editable(e.target) || document.querySelector('dialog[open], [role="dialog"], [role="alertdialog"]')) return;
    const code = buffer.key(e.key, e.timeStamp);
    if (code) {
      e.preventDefault();
      onScan(code);
    }
  };
  window.addEventListener('keydown', onkeydown, true);
  return () => window.removeEventListener('keydown', onkeydown, true);
}

/** The pet with this barcode (ignoring case), or null. */
export async function petBySku(code: string): Promise<Pet | null> {
  const page = await listPets({ sku: code.trim(), limit: 1 });
  return page.items[0] ?? null;
}

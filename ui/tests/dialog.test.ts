import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';

import ShortcutsDialog from '../src/components/ShortcutsDialog.svelte';

describe('Dialog', () => {
  it('makes the rest of the page inert while it is open, and gives the focus back', async () => {
    const page = document.createElement('div');
    page.innerHTML = '<button id="opener">Open</button>';
    document.body.append(page);
    const opener = page.querySelector('button')!;
    opener.focus();

    const { unmount } = render(ShortcutsDialog, { onclose: () => {} });
    expect(page).toHaveAttribute('inert');
    const backdrop = screen.getByRole('dialog').parentElement!;
    expect(backdrop).not.toHaveAttribute('inert');

    unmount();
    expect(page).not.toHaveAttribute('inert');
    expect(document.activeElement).toBe(opener);
    page.remove();
  });

  it("keeps Shift+Tab inside as WebKitGTK sends it (key Unidentified, code Tab)", async () => {
    render(ShortcutsDialog, { onclose: () => {} });
    const dialog = screen.getByRole('dialog');
    const buttons = [...dialog.querySelectorAll('button')];
    const [first, last] = [buttons[0], buttons.at(-1)!];
    first.focus();
    await fireEvent.keyDown(window, { key: 'Unidentified', code: 'Tab', shiftKey: true });
    expect(document.activeElement).toBe(last);
    await fireEvent.keyDown(window, { key: 'Tab', code: 'Tab' });
    expect(document.activeElement).toBe(first);
  });
});

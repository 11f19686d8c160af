// The app shell (menu, shortcuts, pager, dialogs, toasts) and Categories in German and
// Spanish: every text translated, none missing, and a change of language shown at once.
// (Inventory's, the status bar's and the outbox's are in inventory.test.ts and sync.test.ts.)
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import ConfirmButton from '../src/components/ConfirmButton.svelte';
import LeaveOutboxDialog from '../src/components/LeaveOutboxDialog.svelte';
import Nav from '../src/components/Nav.svelte';
import Pager from '../src/components/Pager.svelte';
import ShortcutsDialog from '../src/components/ShortcutsDialog.svelte';
import Toast from '../src/components/Toast.svelte';
import { category, paged, shopSettings, stockItem } from '../src/dev/fixtures';
import { mockBackend } from '../src/dev/mockBackend';
import { lowStock } from '../src/lib/lowStock.svelte';
import { shop } from '../src/lib/shop.svelte';
import { toast } from '../src/lib/toast.svelte';
import CategoriesScreen from '../src/screens/CategoriesScreen.svelte';
import { expectNoMissingKeys, resetLanguageAfterEach, speak } from './languages';

resetLanguageAfterEach();
afterEach(() => {
  lowStock.count = null;
});

describe('Categories in German and Spanish', () => {
  it('German: plurals of the pets in use, the question and the form', async () => {
    speak('de');
    mockBackend({ list_categories: () => paged([category(1, 'Dogs', 12), category(2, 'Cats', 1), category(3, 'Fish', 0)]) });
    render(CategoriesScreen);
    expect(await screen.findByTestId('pet-count-1')).toHaveTextContent('12');
    expect(screen.getByRole('heading', { name: 'Kategorien' })).toBeInTheDocument();
    expect(screen.getByTestId('delete-category-1')).toHaveAccessibleName('Dogs löschen (nicht möglich, solange sie 12 Tiere hat)');
    expect(screen.getByTestId('delete-category-2')).toHaveAccessibleName('Cats löschen (nicht möglich, solange sie 1 Tier hat)');
    expect(screen.getByTestId('delete-category-2').parentElement).toHaveAttribute(
      'title',
      'Cats hat 1 Tier: Verschieben oder löschen Sie es zuerst',
    );
    expect(screen.getByTestId('show-pets-1')).toHaveTextContent('Tiere anzeigen');

    await userEvent.click(screen.getByTestId('delete-category-3'));
    const question = screen.getByRole('dialog', { name: 'Kategorie Fish löschen?' });
    expect(question).toHaveTextContent('Damit wird die Kategorie Fish entfernt.');
    await userEvent.click(within(question).getByRole('button', { name: 'Behalten' }));

    await userEvent.click(screen.getByTestId('new-category'));
    const form = screen.getByRole('dialog', { name: 'Neue Kategorie' });
    await userEvent.click(within(form).getByTestId('save-category'));
    expect(form).toHaveTextContent('Geben Sie einen Namen ein.');
    expect(within(form).getByTestId('save-category')).toHaveTextContent('Kategorie anlegen');
    expectNoMissingKeys();
  });

  it('Spanish: plurals, grouped numbers, and the empty list', async () => {
    speak('es');
    mockBackend({ list_categories: () => paged([category(1, 'Perros', 12_345), category(2, 'Gatos', 1)]) });
    const { unmount } = render(CategoriesScreen);
    expect(await screen.findByTestId('pet-count-1')).toHaveTextContent('12.345');
    expect(screen.getByTestId('delete-category-1')).toHaveAccessibleName(
      'Eliminar Perros (no es posible mientras tenga 12.345 mascotas)',
    );
    expect(screen.getByTestId('delete-category-2')).toHaveAccessibleName('Eliminar Gatos (no es posible mientras tenga 1 mascota)');
    expect(screen.getByTestId('rename-category-2')).toHaveAccessibleName('Renombrar Gatos');
    unmount();

    mockBackend({ list_categories: () => paged([]) });
    render(CategoriesScreen);
    expect(await screen.findByTestId('empty-state')).toHaveTextContent('Aún no hay categorías');
    expectNoMissingKeys();
  });
});

describe('The app shell in German and Spanish', () => {
  it('the menu names the screens and the low-stock badge, and follows a change of language at once', async () => {
    mockBackend({
      get_shop_settings: () => shopSettings({ lowStockBelow: 3 }),
      list_inventory: () => paged([stockItem(6, 'Nemo', 2)], 4),
    });
    await shop.refresh();
    render(Nav);
    await lowStock.refresh();
    expect(screen.getByTestId('nav-inventory')).toHaveTextContent('Inventory');

    speak('de');
    await waitFor(() => expect(screen.getByTestId('nav-inventory')).toHaveTextContent('Bestand'));
    expect(screen.getByTestId('nav-pets')).toHaveTextContent('Tiere');
    expect(screen.getByTestId('nav-sales')).toHaveTextContent('Umsatz');
    expect(screen.getByTestId('low-stock-badge')).toHaveAttribute('title', '4 Tiere mit niedrigem Bestand');
    expect(screen.getByTestId('shortcuts-help')).toHaveTextContent('Tastenkürzel');
    expect(screen.getByRole('navigation')).toHaveAccessibleName('Ansichten');

    speak('es');
    await waitFor(() => expect(screen.getByTestId('nav-settings')).toHaveTextContent('Ajustes'));
    expect(screen.getByTestId('low-stock-badge')).toHaveAttribute('title', '4 mascotas con stock bajo');
    expectNoMissingKeys();
  });

  it('the shortcuts: "Strg" on German keycaps, Ctrl in Spanish', () => {
    speak('de');
    const { unmount } = render(ShortcutsDialog, { onclose: vi.fn() });
    let dialog = screen.getByRole('dialog', { name: 'Tastenkürzel' });
    expect(dialog).toHaveTextContent('Einstellungen öffnen');
    expect(dialog).toHaveTextContent('Neues Tier');
    expect([...dialog.querySelectorAll('kbd')].map((k) => k.textContent)).toContain('Strg');
    expect(dialog).not.toHaveTextContent('Ctrl');
    unmount();

    speak('es');
    render(ShortcutsDialog, { onclose: vi.fn() });
    dialog = screen.getByRole('dialog', { name: 'Atajos de teclado' });
    expect(dialog).toHaveTextContent('Ir a Ajustes');
    expect([...dialog.querySelectorAll('kbd')].map((k) => k.textContent)).toContain('Ctrl');
    expect(within(dialog).getAllByRole('button', { name: 'Cerrar' })).toHaveLength(2);
    expectNoMissingKeys();
  });

  it('the question before leaving, the pager, a confirmation and the toast', async () => {
    speak('de');
    render(LeaveOutboxDialog, { counts: { pending: 2, attention: 0 }, leaving: 'quit', onstay: vi.fn(), onleave: vi.fn() });
    const leave = screen.getByRole('dialog', { name: 'Noch nicht auf dem Server' });
    expect(within(leave).getByTestId('leave-outbox-stay')).toHaveTextContent('Petstore offen lassen');
    expect(within(leave).getByTestId('leave-outbox-leave')).toHaveTextContent('Trotzdem beenden');
    expect(within(leave).getByRole('button', { name: 'Schließen' })).toHaveAttribute('title', 'Schließen (Esc)');

    render(Pager, { offset: 25, limit: 25, count: 25, total: 1234, onpage: vi.fn() });
    const pager = screen.getByRole('navigation', { name: 'Seiten' });
    expect(within(pager).getByTestId('pager-range')).toHaveTextContent('26–50 von 1.234');
    expect(within(pager).getByTestId('pager-prev')).toHaveTextContent('‹ Zurück');
    expect(within(pager).getByTestId('pager-next')).toHaveTextContent('Weiter ›');
    expect(within(pager).getByTestId('pager-first')).toHaveAccessibleName('Erste Seite');

    speak('es');
    render(ConfirmButton, { label: 'Borrar', title: '¿Borrar?', message: 'Seguro', confirmLabel: 'Borrar', onconfirm: vi.fn() });
    await userEvent.click(screen.getByRole('button', { name: 'Borrar' }));
    expect(screen.getByRole('dialog', { name: '¿Borrar?' })).toHaveTextContent('Conservar');

    render(Toast);
    toast.show('Hecho');
    expect(await screen.findByTestId('toast')).toHaveAccessibleName('Aviso');
    expect(within(screen.getByTestId('toast')).getByRole('button', { name: 'Descartar' })).toBeInTheDocument();
    expectNoMissingKeys();
  });
});

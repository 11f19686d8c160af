// The Pets screen, its dialogs and the pet picker in German and Spanish: every text from
// src/locales/{de,es}/pets.json (and the statuses from common.json), none missing, and a
// change of language shown at once.
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import PetPicker from '../src/components/PetPicker.svelte';
import { category, paged, pet, stockItem } from '../src/dev/fixtures';
import type { Handler } from '../src/dev/mockBackend';
import { mockBackend, reject } from './petsBackend';
import type { Language } from '../src/lib/i18n.svelte';
import { toast } from '../src/lib/toast.svelte';
import PetsScreen from '../src/screens/PetsScreen.svelte';
import { inventoryOf, listPets } from './fixtures/pets';
import {
  ENGLISH,
  englishLeft,
  expectAllTranslated,
  expectNoMissingKeys,
  OTHER_LANGUAGES,
  resetLanguageAfterEach,
  speak,
} from './languages';
import { scan } from './scanner';

const PETS = [
  pet(1, 'Rex', { price: '1234.50', sku: '4006381333931', categoryId: 1 }),
  pet(2, 'Bella', { status: 'pending' }),
  pet(3, 'Tom', { status: 'sold', categoryId: 2 }),
];
const STOCK: Record<number, number> = { 1: 3, 2: 1, 3: 0 };

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    list_pets: listPets(PETS),
    list_categories: () => paged([category(1, 'Dogs', 1), category(2, 'Cats', 1)]),
    get_inventory: inventoryOf(PETS, STOCK),
    ...more,
  });
}

/** The Pets screen in `language` with its rows shown; `more` answers other commands. */
async function showPets(language: Language, more: Record<string, Handler> = {}) {
  speak(language);
  backend(more);
  render(PetsScreen);
  await screen.findByTestId('pet-row-1');
}

const row = (id: number) => screen.getByTestId(`pet-row-${id}`);

/** The dialog open, by its name (found by a cheap query first: role queries are slow in jsdom). */
async function dialogNamed(name: string) {
  await waitFor(() => expect(document.querySelector('[role="dialog"]')).not.toBeNull());
  return screen.getByRole('dialog', { name });
}

// The English UI words the end-to-end languages test looks for, and three more that this
// screen's German and Spanish texts avoid too (the end-to-end list leaves out Name and Status,
// German words as well).
const WORDS = [...ENGLISH, 'New', 'Name', 'Status'];

resetLanguageAfterEach();

describe('the Pets screen in German', () => {
  it('shows the table, statuses, sidebar and stock in German', async () => {
    await showPets('de');
    expect(screen.getByRole('heading', { name: 'Tiere' })).toBeInTheDocument();
    expect(screen.getByTestId('new-pet')).toHaveTextContent('+ Neues Tier');
    expect(screen.getByTestId('search')).toHaveAttribute('placeholder', 'Tiername oder Barcode…');
    expect(screen.getByRole('columnheader', { name: 'Bestand' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Kategorie' })).toBeInTheDocument();
    expect(screen.getByTestId('status-1')).toHaveTextContent('verfügbar');
    expect(screen.getByTestId('status-2')).toHaveTextContent('reserviert');
    expect(screen.getByTestId('status-3')).toHaveTextContent('verkauft');
    expect(screen.getByTestId('filter-pending')).toHaveTextContent('reserviert');
    expect(screen.getByRole('group', { name: 'Nach Verfügbarkeit filtern' })).toBeInTheDocument();
    expect(screen.getByTestId('category-filter-all')).toHaveTextContent(/Alle Tiere\s*3/);
    await waitFor(() => expect(row(3)).toHaveTextContent('nicht vorrätig'));
    expect(row(1)).toHaveTextContent('1.234,50');
    expect(within(row(1)).getByRole('button', { name: 'Rex verkaufen' })).toHaveTextContent('Verkaufen');
    expect(within(row(1)).getByRole('button', { name: 'Rex bearbeiten' })).toBeInTheDocument();
    expect(within(row(1)).getByRole('button', { name: 'Ein Stück Rex hinzufügen' })).toHaveAttribute(
      'title',
      'Eins mehr im Bestand',
    );
    expectNoMissingKeys();
  });

  it('changes language at once, without a reload', async () => {
    await showPets('en');
    expect(screen.getByTestId('status-1')).toHaveTextContent('available');
    speak('de');
    await waitFor(() => expect(screen.getByTestId('status-1')).toHaveTextContent('verfügbar'));
    expect(screen.getByRole('heading', { name: 'Tiere' })).toBeInTheDocument();
    speak('es');
    await waitFor(() => expect(screen.getByTestId('status-1')).toHaveTextContent('disponible'));
    expect(screen.getByRole('heading', { name: 'Mascotas' })).toBeInTheDocument();
    expectNoMissingKeys();
  });

  it('says an unknown barcode in German, and again in Spanish when the language changes', async () => {
    await showPets('de');
    scan('4006381333999');
    const message = await screen.findByTestId('scan-message');
    expect(message).toHaveTextContent('Kein Tier hat den Barcode 4006381333999.');
    expect(screen.getByRole('button', { name: 'Meldung schließen' })).toBeInTheDocument();
    speak('es');
    await waitFor(() =>
      expect(screen.getByTestId('scan-message')).toHaveTextContent('Ninguna mascota tiene el código de barras 4006381333999.'),
    );
    expectNoMissingKeys();
  });

  it('the pet form: title, labels, statuses and its own validation', async () => {
    await showPets('de', {
      create_pet: ({ pet: p }) => pet(50, p.name, p),
      adjust_inventory: () => stockItem(50, 'Goldie', 2),
    });
    await userEvent.click(screen.getByTestId('new-pet'));
    const dialog = screen.getByRole('dialog', { name: 'Neues Tier' });
    expect(within(dialog).getByLabelText('Kategorie')).toBeInTheDocument();
    expect(within(dialog).getByRole('option', { name: 'Keine Kategorie' })).toBeInTheDocument();
    expect(within(dialog).getByRole('option', { name: 'reserviert' })).toHaveValue('pending');
    expect(within(dialog).getByText('Anfangsbestand')).toBeInTheDocument();
    expect(within(dialog).getByTestId('save-pet')).toHaveTextContent('Tier anlegen');
    await userEvent.click(within(dialog).getByTestId('save-pet'));
    expect(within(dialog).getByText('Geben Sie einen Namen ein.')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByTestId('pet-new-category'));
    await userEvent.type(within(dialog).getByTestId('pet-new-category-name'), '{Enter}');
    expect(within(dialog).getByText('Geben Sie den Namen der neuen Kategorie ein.')).toBeInTheDocument();
    // The new category's Cancel (the form's own comes last).
    await userEvent.click(within(dialog).getAllByRole('button', { name: 'Abbrechen' })[0]);

    await userEvent.type(within(dialog).getByTestId('pet-name'), 'Goldie');
    const stock = within(dialog).getByTestId('pet-initial-stock-input');
    await userEvent.clear(stock);
    await userEvent.type(stock, '2');
    await userEvent.click(within(dialog).getByTestId('save-pet'));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(toast.message).toBe('Goldie hinzugefügt');
    expectNoMissingKeys();
  });

  it('the delete dialog, and why a pet with orders is kept', async () => {
    await showPets('de', { delete_pet: reject('pet_has_orders', 'Pet 1 has orders and cannot be deleted.') });
    await waitFor(() => expect(within(row(1)).getByTestId('pet-stock')).toHaveTextContent('3'));
    await userEvent.click(screen.getByTestId('delete-pet-1'));
    const dialog = screen.getByRole('dialog', { name: 'Rex löschen?' });
    expect(dialog).toHaveTextContent('Damit werden Rex (#1) und der Bestand von 3 endgültig gelöscht.');
    expect(within(dialog).getByRole('button', { name: 'Behalten' })).toBeInTheDocument();
    expect(within(dialog).getByTestId('confirm')).toHaveTextContent('Tier löschen');
    await userEvent.click(within(dialog).getByTestId('confirm'));
    const alert = await within(dialog).findByTestId('error-alert');
    expect(alert).toHaveTextContent('Rex (#1) kann nicht gelöscht werden.');
    expect(alert).toHaveTextContent('Es sind noch 3 im Bestand');
    expectNoMissingKeys();
  });

  it('the sale dialog, and the toast of a counter sale', async () => {
    await showPets('de', {
      place_order: ({ order }) => ({ id: 41, ...order, createdAt: '2026-11-22T10:15:00Z', total: '2469.00' }),
    });
    await userEvent.click(screen.getByTestId('order-pet-1'));
    const dialog = await dialogNamed('Rex verkaufen');
    await waitFor(() => expect(within(dialog).getByTestId('order-stock')).toHaveTextContent('3'));
    expect(dialog).toHaveTextContent('Bestand: 3');
    expect(within(dialog).getByTestId('sell-now')).toHaveTextContent('Jetzt verkaufen');
    expect(within(dialog).getByTestId('place-order')).toHaveTextContent('Bestellen');
    const qty = within(dialog).getByTestId('order-quantity');
    await userEvent.clear(qty);
    await userEvent.type(qty, '5');
    expect(within(dialog).getByTestId('sale-over-stock')).toHaveTextContent('Rex (#1) hat 3 im Bestand.');
    expect(within(dialog).getByTestId('sale-add-stock')).toHaveTextContent('2 zum Bestand hinzufügen');
    await userEvent.clear(qty);
    await userEvent.type(qty, '2');
    await userEvent.click(within(dialog).getByTestId('sell-now'));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(toast.message).toBe('Verkauf #41: 2 × Rex, 2.469,00\u00a0€');
    expectNoMissingKeys();
  });

  it('a pet that is not available says its status in German', async () => {
    await showPets('de');
    await userEvent.click(screen.getByTestId('order-pet-3'));
    const dialog = await dialogNamed('Tom verkaufen');
    expect(dialog).toHaveTextContent('Nur verfügbare Tiere können verkauft werden; Tom (#3) ist verkauft.');
    expect(dialog).toHaveTextContent('kein Preis festgelegt');
    expectNoMissingKeys();
  });

  it('the first run and the empty state', async () => {
    speak('de');
    mockBackend({ list_pets: () => paged([]), list_categories: () => paged([]) });
    render(PetsScreen);
    const steps = await screen.findByTestId('first-run');
    expect(steps).toHaveTextContent('1. Kategorien anlegen');
    expect(steps).toHaveTextContent('3. Bestand erfassen');
    expect(within(steps).getByTestId('first-run-stock')).toHaveTextContent('Bestand öffnen');
    await userEvent.click(screen.getByTestId('filter-sold'));
    const empty = await screen.findByTestId('empty-state');
    expect(empty).toHaveTextContent('Keine Tiere passen zu diesen Filtern');
    expect(within(empty).getByRole('button', { name: 'Filter zurücksetzen' })).toBeInTheDocument();
    expectNoMissingKeys();
  });

  it('the category sidebar says when it could not load', async () => {
    speak('de');
    mockBackend({
      list_pets: () => paged([pet(1, 'Rex')]),
      list_categories: reject('busy', 'The database is busy.', 503),
      get_inventory: () => stockItem(1, 'Rex', 1),
    });
    render(PetsScreen);
    expect(await screen.findByTestId('categories-error')).toHaveTextContent(
      'Die Kategorien konnten nicht geladen werden: The database is busy.',
    );
    expect(screen.getByTestId('categories-retry')).toHaveTextContent('Erneut versuchen');
    expectNoMissingKeys();
  });
});

describe('no English word left', () => {
  it('(the check sees the English screen’s words)', async () => {
    await showPets('en');
    expect(englishLeft(document.body, WORDS)).toEqual(
      expect.arrayContaining(['New', 'Name', 'Status', 'Price', 'Sell', 'Edit', 'Delete']),
    );
  });

  it.each(OTHER_LANGUAGES)('%s: the screen, the pet form, the sale and the delete dialog', async (language) => {
    await showPets(language);
    await waitFor(() => expect(row(3)).toHaveTextContent(/\S/));
    expectAllTranslated({ words: WORDS });
    for (const [open, testid] of [
      ['new-pet', 'pet-dialog'],
      ['order-pet-1', 'order-dialog'],
      ['delete-pet-1', 'delete-pet-dialog'],
    ]) {
      await userEvent.click(screen.getByTestId(open));
      await screen.findByTestId(testid);
      expectAllTranslated({ words: WORDS, where: testid });
      await userEvent.keyboard('{Escape}');
      await waitFor(() => expect(screen.queryByTestId(testid)).not.toBeInTheDocument());
    }
    expectNoMissingKeys();
  });
});

describe('the Pets screen in Spanish', () => {
  it('shows the table, statuses and dialogs in Spanish', async () => {
    await showPets('es');
    expect(screen.getByRole('heading', { name: 'Mascotas' })).toBeInTheDocument();
    expect(screen.getByTestId('new-pet')).toHaveTextContent('+ Nueva mascota');
    expect(screen.getByTestId('status-2')).toHaveTextContent('reservado');
    expect(screen.getByTestId('filter-sold')).toHaveTextContent('vendido');
    expect(screen.getByTestId('category-filter-all')).toHaveTextContent(/Todas las mascotas\s*3/);
    await waitFor(() => expect(row(3)).toHaveTextContent('agotado'));

    await userEvent.click(screen.getByTestId('order-pet-1'));
    const sale = await dialogNamed('Vender Rex');
    expect(within(sale).getByTestId('sell-now')).toHaveTextContent('Vender ya');
    expect(within(sale).getByRole('button', { name: 'Cancelar' })).toBeInTheDocument();
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    await userEvent.click(screen.getByTestId('edit-pet-1'));
    const form = screen.getByRole('dialog', { name: 'Editar Rex' });
    expect(within(form).getByTestId('save-pet')).toHaveTextContent('Guardar cambios');
    expect(within(form).getByLabelText(/Código de barras/)).toBeInTheDocument();
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());

    await userEvent.click(screen.getByTestId('delete-pet-2'));
    const del = screen.getByRole('dialog', { name: '¿Eliminar Bella?' });
    expect(within(del).getByTestId('confirm')).toHaveTextContent('Eliminar mascota');
    expectNoMissingKeys();
  });
});

describe('the pet picker', () => {
  it.each([
    ['de', 'Tier', 'Teil eines Namens eingeben…', 'Kein Tier hat den Barcode 12345, und kein verfügbares Tier hat diesen Namen.'],
    ['es', 'Mascota', 'Escribe parte de un nombre…', 'Ninguna mascota tiene el código de barras 12345 y ninguna disponible tiene ese nombre.'],
  ] as const)('%s: its label, placeholder and messages', async (language, label, placeholder, nothing) => {
    speak(language);
    backend();
    render(PetPicker, { id: 'picker' });
    const field = screen.getByRole('combobox', { name: label });
    expect(field).toHaveAttribute('placeholder', placeholder);
    await userEvent.type(field, '12345{Enter}');
    expect(await screen.findByText(nothing)).toBeInTheDocument();
    expectNoMissingKeys();
  });

  it('says a sold pet’s status in German', async () => {
    speak('de');
    backend();
    render(PetPicker, { id: 'picker' });
    await userEvent.type(screen.getByRole('combobox', { name: 'Tier' }), '4006381333931');
    PETS[0] = { ...PETS[0], status: 'sold' };
    try {
      await userEvent.keyboard('{Enter}');
      expect(
        await screen.findByText('Rex (#1) hat diesen Barcode, ist aber verkauft: Nur verfügbare Tiere können bestellt werden.'),
      ).toBeInTheDocument();
    } finally {
      PETS[0] = { ...PETS[0], status: 'available' };
    }
    expectNoMissingKeys();
  });
});

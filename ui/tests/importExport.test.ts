import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import { toast } from '../src/lib/toast.svelte';
import ImportExportPanel from '../src/screens/settings/ImportExportPanel.svelte';
import { fileName, folderOf, formatBytes, splitRefusal } from '../src/screens/settings/files';

const REFUSAL =
  'line 3, column category: there is no category named "Cats"; add it first, or import with createCategories=true';

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    choose_file: ({ choice }) => (choice.kind === 'save' ? `/home/shop/${choice.name}` : '/home/shop/new-pets.csv'),
    export_csv: () => 48_213,
    import_pets_csv: ({ createCategories, dryRun }) => ({
      pets: 120,
      categoriesCreated: createCategories ? ['Reptiles'] : [],
      dryRun,
    }),
    ...more,
  });
}

describe('Export', () => {
  it('asks where, writes the file there and says what was saved', async () => {
    const b = backend();
    render(ImportExportPanel);
    await userEvent.click(screen.getByTestId('export-pets'));
    await waitFor(() => expect(toast.message).toBe('Saved pets.csv (48 KB) to /home/shop'));
    expect(b.argsOf('choose_file')).toEqual([{ choice: { kind: 'save', name: 'pets.csv' } }]);
    expect(b.argsOf('export_csv')).toEqual([{ kind: 'pets', path: '/home/shop/pets.csv', from: null, to: null }]);
    expect(screen.getByTestId('export-result')).toHaveTextContent('Saved pets.csv (48 KB) to /home/shop');

    await userEvent.click(screen.getByTestId('export-orders'));
    await waitFor(() => expect(b.argsOf('export_csv')).toHaveLength(2));
    expect(b.argsOf('export_csv')[1]).toMatchObject({ kind: 'orders', path: '/home/shop/orders.csv' });
    expect(screen.getByTestId('export-inventory')).toHaveTextContent('Export inventory…');
  });

  it('writes nothing when the dialog is cancelled', async () => {
    const b = backend({ choose_file: () => null });
    render(ImportExportPanel);
    await userEvent.click(screen.getByTestId('export-inventory'));
    await waitFor(() => expect(b.countOf('choose_file')).toBe(1));
    expect(b.countOf('export_csv')).toBe(0);
    expect(screen.queryByTestId('export-result')).not.toBeInTheDocument();
  });
});

describe('Import', () => {
  it('checks the file first, then imports that same file for real', async () => {
    const b = backend();
    render(ImportExportPanel);
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('import-choose'));
    await waitFor(() => expect(screen.getByTestId('import-path')).toHaveValue('/home/shop/new-pets.csv'));
    expect(b.argsOf('choose_file')).toEqual([{ choice: { kind: 'open' } }]);
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();

    await userEvent.click(screen.getByTestId('import-create-categories'));
    await userEvent.click(screen.getByTestId('import-check'));
    const result = await screen.findByTestId('import-result');
    expect(result).toHaveTextContent('120 pets will be imported');
    expect(result).toHaveTextContent('new categories: Reptiles');
    expect(b.argsOf('import_pets_csv')).toEqual([
      { path: '/home/shop/new-pets.csv', createCategories: true, dryRun: true },
    ]);

    const run = screen.getByTestId('import-run');
    expect(run).toHaveTextContent('Import 120 pets');
    await userEvent.click(run);
    await waitFor(() => expect(b.argsOf('import_pets_csv')).toHaveLength(2));
    expect(b.argsOf('import_pets_csv')[1]).toEqual({
      path: '/home/shop/new-pets.csv',
      createCategories: true,
      dryRun: false,
    });
    await waitFor(() => expect(screen.getByTestId('import-result')).toHaveTextContent('120 pets imported'));
    expect(toast.message).toBe('120 pets imported');
    // Done: importing the file again takes a new check.
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();
  });

  it('shows a refusal with its line and column, and offers no Import', async () => {
    const b = backend({ import_pets_csv: reject('validation_failed', REFUSAL, 422) });
    render(ImportExportPanel);
    await userEvent.type(screen.getByTestId('import-path'), '/home/shop/cats.csv');
    await userEvent.click(screen.getByTestId('import-check'));
    const error = await screen.findByTestId('import-error');
    expect(screen.getByTestId('import-error-where')).toHaveTextContent('Line 3, column category');
    expect(error).toHaveTextContent('There is no category named "Cats"; add it first, or tick “Create missing categories”');
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();
    expect(screen.queryByTestId('import-result')).not.toBeInTheDocument();
    expect(b.argsOf('import_pets_csv')).toEqual([{ path: '/home/shop/cats.csv', createCategories: false, dryRun: true }]);
  });

  it('a changed file or option needs a new check before Import', async () => {
    const b = backend();
    render(ImportExportPanel);
    const path = screen.getByTestId('import-path');
    await userEvent.type(path, '/home/shop/a.csv');
    await userEvent.click(screen.getByTestId('import-check'));
    await screen.findByTestId('import-run');

    await userEvent.click(screen.getByTestId('import-create-categories'));
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();
    expect(screen.getByTestId('import-stale')).toBeInTheDocument();
    // Back to what was checked: that check holds again.
    await userEvent.click(screen.getByTestId('import-create-categories'));
    expect(screen.getByTestId('import-run')).toBeInTheDocument();

    await userEvent.type(path, 'x');
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('import-check'));
    await screen.findByTestId('import-run');
    expect(b.argsOf('import_pets_csv').at(-1)).toEqual({ path: '/home/shop/a.csvx', createCategories: false, dryRun: true });
    expect(b.argsOf('import_pets_csv').every((a) => a.dryRun)).toBe(true);
  });

  it('asks for a file before checking', async () => {
    const b = backend();
    render(ImportExportPanel);
    await userEvent.click(screen.getByTestId('import-check'));
    expect(await screen.findByTestId('import-error')).toHaveTextContent('Choose the CSV file first');
    expect(b.countOf('import_pets_csv')).toBe(0);
  });

  it('a file with no pets is said, with nothing to import', async () => {
    backend({ import_pets_csv: ({ dryRun }) => ({ pets: 0, categoriesCreated: [], dryRun }) });
    render(ImportExportPanel);
    await userEvent.type(screen.getByTestId('import-path'), '/home/shop/empty.csv');
    await userEvent.click(screen.getByTestId('import-check'));
    expect(await screen.findByTestId('import-result')).toHaveTextContent('The file has no pets to import.');
    expect(screen.queryByTestId('import-run')).not.toBeInTheDocument();
  });
});

describe('File helpers', () => {
  it('names files and folders, sizes and the place of a refusal', () => {
    expect(fileName('/home/shop/pets.csv')).toBe('pets.csv');
    expect(fileName('C:\\Users\\shop\\pets.csv')).toBe('pets.csv');
    expect(folderOf('/home/shop/pets.csv')).toBe('/home/shop');
    expect(folderOf('/pets.csv')).toBe('/');
    expect(formatBytes(512, 'en')).toBe('512 bytes');
    expect(formatBytes(48_213, 'en')).toBe('48 KB');
    expect(formatBytes(3_240_000, 'en')).toBe('3.2 MB');
    expect(splitRefusal(REFUSAL)).toEqual({
      line: 3,
      column: 'category',
      reason: 'There is no category named "Cats"; add it first, or import with createCategories=true',
    });
    expect(splitRefusal('line 1: the column name is missing')).toMatchObject({ line: 1, column: null });
    expect(splitRefusal('the file cannot be read')).toEqual({ line: null, column: null, reason: 'the file cannot be read' });
  });
});

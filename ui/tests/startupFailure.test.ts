import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';

import { mockBackend, reject } from '../src/dev/mockBackend';
import type { StartupFailure } from '../src/lib/bindings/StartupFailure';
import StartupFailureScreen from '../src/screens/startup/StartupFailureScreen.svelte';
import { expectNoMissingKeys, resetLanguageAfterEach, speak } from './languages';

const NEWER: StartupFailure = {
  kind: 'newerDatabase',
  message:
    'the database /home/shop/petstore.db has schema version 12, newer than this Petstore understands (10); upgrade Petstore. The file was left untouched.',
  dataDir: '/home/shop',
};

/** The window's title for each kind of failure but a newer database, in that order. */
function otherTitles() {
  return (['alreadyOpen', 'damagedDatabase', 'unwritableFolder', 'other'] as const).map((kind) => {
    const { unmount } = render(StartupFailureScreen, { failure: { ...NEWER, kind } });
    const title = screen.getByRole('heading').textContent;
    unmount();
    return title;
  });
}

describe('StartupFailureScreen', () => {
  it('says what happened in words, then the exact message and the folder', () => {
    render(StartupFailureScreen, { failure: NEWER });
    expect(screen.getByRole('heading')).toHaveTextContent('This shop’s data comes from a newer Petstore');
    expect(screen.getByTestId('startup-failure-message')).toHaveTextContent('schema version 12');
    expect(screen.getByTestId('startup-failure')).toHaveTextContent('Data folder: /home/shop');
  });

  it('each kind has its own advice', () => {
    expect(otherTitles()).toEqual([
      'Petstore is already open',
      'The shop’s database cannot be read',
      'Petstore cannot write in its data folder',
      'Petstore could not start',
    ]);
  });

  it('starts again, opens the folder or quits; a folder that cannot be opened says why', async () => {
    const backend = mockBackend({
      restart_app: () => null,
      quit_app: () => null,
      open_data_folder: reject('validation_failed', 'could not open /home/shop: no file manager', 400),
    });
    render(StartupFailureScreen, { failure: NEWER });
    await fireEvent.click(screen.getByTestId('startup-restart'));
    await fireEvent.click(screen.getByTestId('startup-open-folder'));
    expect(await screen.findByRole('alert')).toHaveTextContent('could not open /home/shop: no file manager');
    await fireEvent.click(screen.getByTestId('startup-quit'));
    expect(backend.calls.map((c) => c.cmd)).toEqual(['restart_app', 'open_data_folder', 'quit_app']);
  });

  it('restores a backup chosen in the dialog, then offers to start again', async () => {
    const backend = mockBackend({
      choose_backup: () => '/home/shop/Backups/petstore-2026-11-20.db',
      restore_backup: ({ path }) => `Restored 12 pets and 3 orders from ${path}.`,
    });
    render(StartupFailureScreen, { failure: { ...NEWER, kind: 'damagedDatabase' } });
    await fireEvent.click(screen.getByTestId('startup-restore'));
    expect(await screen.findByTestId('startup-restored')).toHaveTextContent('Restored 12 pets and 3 orders');
    expect(backend.argsOf('restore_backup')).toEqual([{ path: '/home/shop/Backups/petstore-2026-11-20.db' }]);
    expect(screen.getByTestId('startup-restart')).toHaveFocus();
    expect(screen.queryByTestId('startup-restore')).toBeNull();
  });

  it('offers no backup when the folder, not the database, stopped the start', () => {
    render(StartupFailureScreen, { failure: { ...NEWER, kind: 'unwritableFolder' } });
    expect(screen.queryByTestId('startup-restore')).toBeNull();
  });

  it('a cancelled dialog restores nothing', async () => {
    const backend = mockBackend({ choose_backup: () => null });
    render(StartupFailureScreen, { failure: NEWER });
    await fireEvent.click(screen.getByTestId('startup-restore'));
    expect(backend.countOf('choose_backup')).toBe(1);
    expect(backend.countOf('restore_backup')).toBe(0);
    expect(screen.queryByTestId('startup-restored')).toBeNull();
  });
});

describe('in German and Spanish', () => {
  resetLanguageAfterEach();

  it('says what happened and what helps, keeping the message and the folder as they are', () => {
    speak('de');
    const de = render(StartupFailureScreen, { failure: NEWER });
    expect(screen.getByRole('heading')).toHaveTextContent('Die Daten dieses Geschäfts stammen von einem neueren Petstore');
    expect(screen.getByTestId('startup-failure-message')).toHaveTextContent('schema version 12');
    expect(screen.getByTestId('startup-failure')).toHaveTextContent('Datenordner: /home/shop');
    expect(screen.getByTestId('startup-restart')).toHaveTextContent('Neu starten');
    expect(screen.getByTestId('startup-restore')).toHaveTextContent('Sicherung wiederherstellen…');
    de.unmount();

    speak('es');
    expect(otherTitles()).toEqual([
      'Petstore ya está abierto',
      'No se puede leer la base de datos de la tienda',
      'Petstore no puede escribir en su carpeta de datos',
      'Petstore no ha podido iniciarse',
    ]);
    render(StartupFailureScreen, { failure: NEWER });
    expect(screen.getByTestId('startup-quit')).toHaveTextContent('Salir');
    expectNoMissingKeys();
  });
});

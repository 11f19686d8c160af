// Settings, the error hints and the checks made before calling, in German and Spanish: every
// text there comes from src/locales, and none is missing. (The startup failure window's are
// in startupFailure.test.ts.)
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { apiKey, localStatus, settingsView, shopSettings } from '../src/dev/fixtures';
import { mockBackend, type Handler } from '../src/dev/mockBackend';
import { hintFor, toCommandError } from '../src/lib/errors';
import { parsePrice } from '../src/lib/money';
import { status } from '../src/lib/status.svelte';
import { toast } from '../src/lib/toast.svelte';
import { parseDelta, parseQuantity, parseReason, parseStock } from '../src/lib/validate';
import SettingsScreen from '../src/screens/SettingsScreen.svelte';
import ImportExportPanel from '../src/screens/settings/ImportExportPanel.svelte';
import { formatBytes } from '../src/screens/settings/files';
import { currencyLabel } from '../src/screens/settings/shopOptions';
import { expectNoMissingKeys, resetLanguageAfterEach, speak } from './languages';

const REMOTE = settingsView({ hasRemoteKey: true, backend: 'remote', baseUrl: 'http://shop-server.lan:8787' });

function backend(more: Record<string, Handler> = {}) {
  return mockBackend({
    get_settings: () => REMOTE,
    save_settings: ({ settings }) => ({ ...REMOTE, ...settings, remoteKey: undefined }),
    test_connection: () => ({ ok: false, message: 'Could not connect: connection refused' }),
    get_status: () => localStatus(),
    get_local_api_key: () => 'local-secret-key-123',
    list_api_keys: () => [apiKey('printer'), apiKey('till', { scope: 'write', revokedAt: '2026-11-22T10:15:00Z' })],
    get_shop_settings: () => shopSettings(),
    suggest_backup_path: () => '/home/shop/petstore-backup-2026-11-22.db',
    get_update_settings: () => ({ address: null, currentVersion: '1.0.0', canInstall: true }),
    get_preferences: () => ({ theme: 'system', language: 'system' }),
    choose_file: () => '/home/shop/new-pets.csv',
    import_pets_csv: () => ({ pets: 1200, categoriesCreated: [], dryRun: true }),
    ...more,
  });
}

resetLanguageAfterEach();

describe('Settings in German and Spanish', () => {
  it('shows every panel in German', async () => {
    speak('de');
    backend();
    await status.refresh();
    render(SettingsScreen);
    expect(await screen.findByRole('heading', { level: 1 })).toHaveTextContent('Einstellungen');
    expect(await screen.findByTestId('remote-key')).toHaveAttribute('placeholder', 'gespeichert — leer lassen, um ihn zu behalten');
    expect(screen.getByText('Wo die Daten des Geschäfts liegen')).toBeInTheDocument();
    expect(screen.getByTestId('save-settings')).toHaveTextContent('Einstellungen der Kasse speichern');
    expect(screen.getByTestId('test-connection')).toHaveTextContent('Verbindung testen');
    expect(screen.getByTestId('remote-key-storage')).toHaveTextContent('Im Passwortspeicher dieses Computers gespeichert');
    expect(await screen.findByTestId('shop-save')).toHaveTextContent('Geschäft speichern');
    expect(screen.getByLabelText('Geschäftsname')).toBeInTheDocument();
    // The currency's name in the language shown too.
    expect(screen.getByRole('option', { name: 'EUR — Euro' })).toBeInTheDocument();
    expect(screen.getByTestId('export-pets')).toHaveTextContent('Tiere exportieren…');
    expect(screen.getByTestId('show-key')).toHaveTextContent('Anzeigen');
    expect(screen.getByTestId('backup-now')).toHaveTextContent('Jetzt sichern');
    expect(await screen.findByText('Sie haben Petstore 1.0.0.')).toBeInTheDocument();
    const till = await screen.findByTestId('api-key-row-till');
    expect(till).toHaveTextContent('schreiben');
    expect(till).toHaveTextContent('widerrufen am');
    expect(screen.getByTestId('api-key-row-printer')).toHaveTextContent('aktiv');
    expect(screen.getByRole('button', { name: 'printer widerrufen' })).toBeInTheDocument();
    expectNoMissingKeys();
  });

  it('shows every panel in Spanish, and its own checks follow a change of language', async () => {
    speak('es');
    const b = backend();
    render(SettingsScreen);
    expect(await screen.findByRole('heading', { level: 1 })).toHaveTextContent('Ajustes');
    expect(await screen.findByTestId('shop-save')).toHaveTextContent('Guardar ajustes de la tienda');
    expect(screen.getByTestId('import-check')).toHaveTextContent('Comprobar archivo');
    expect(screen.getByText('Copia de seguridad', { selector: 'h2' })).toBeInTheDocument();

    const url = screen.getByTestId('base-url');
    await userEvent.clear(url);
    await userEvent.type(url, '192.168.1.20:8080');
    await userEvent.click(screen.getByTestId('save-settings'));
    expect(await screen.findByTestId('base-url-error')).toHaveTextContent('Empieza la dirección con http:// o https://');
    expect(b.countOf('save_settings')).toBe(0);

    // The message said here is said again in the language chosen meanwhile.
    speak('de');
    await waitFor(() =>
      expect(screen.getByTestId('base-url-error')).toHaveTextContent('Beginnen Sie die Adresse mit http:// oder https://'),
    );
    expectNoMissingKeys();
  });

  it('counts pets to import with plural forms and grouped numbers', async () => {
    speak('de');
    backend();
    render(ImportExportPanel);
    await userEvent.click(screen.getByTestId('import-choose'));
    await waitFor(() => expect(screen.getByTestId('import-path')).toHaveValue('/home/shop/new-pets.csv'));
    await userEvent.click(screen.getByTestId('import-check'));
    const result = await screen.findByTestId('import-result');
    expect(result).toHaveTextContent('1.200 Tiere werden importiert aus new-pets.csv; neue Kategorien: keine.');
    expect(screen.getByTestId('import-run')).toHaveTextContent('1.200 Tiere importieren');

    speak('es');
    await waitFor(() => expect(screen.getByTestId('import-run')).toHaveTextContent('Importar 1200 mascotas'));
    expect(result).toHaveTextContent('Se importarán 1200 mascotas desde new-pets.csv; categorías nuevas: ninguna.');
    expectNoMissingKeys();
  });

  it('says an export was saved, and its size, in the language shown', async () => {
    speak('es');
    backend({ choose_file: () => '/home/shop/pets.csv', export_csv: () => 1 });
    render(ImportExportPanel);
    await userEvent.click(screen.getByTestId('export-pets'));
    await waitFor(() => expect(toast.message).toBe('pets.csv (1 byte) guardado en /home/shop'));
    expect(formatBytes(512)).toBe('512 bytes');
    speak('de');
    expect(formatBytes(1)).toBe('1 Byte');
    expect(formatBytes(3_240_000)).toBe('3,2 MB');
    expect(currencyLabel('EUR')).toBe('EUR — Euro');
    expect(currencyLabel('USD')).toBe('USD — US-Dollar');
    expectNoMissingKeys();
  });
});

describe('hints and checks in German and Spanish', () => {
  it('gives the hint of an error in the language shown, and the message as the app said it', () => {
    const error = { code: 'insufficient_stock' as const, message: 'only 2 in stock', status: 409 };
    speak('de');
    expect(hintFor(error)).toBe('Nicht genug Bestand dafür: zuerst Bestand hinzufügen oder weniger nehmen.');
    expect(hintFor({ ...error, code: 'not_found' })).toBeNull();
    expect(toCommandError(undefined).message).toBe('Etwas ist schiefgegangen.');
    expect(toCommandError('denied').message).toBe('denied');
    speak('es');
    expect(hintFor({ ...error, code: 'unauthorized' })).toBe('Comprueba la clave de API en Ajustes.');
    expectNoMissingKeys();
  });

  it('says what is wrong with a typed value in the language shown when checked', () => {
    speak('de');
    expect(parseQuantity(0)).toBe('Die Menge muss eine ganze Zahl von 1 bis 10.000 sein.');
    expect(parseStock(-1)).toBe('Die Anzahl muss eine ganze Zahl von 0 bis 1.000.000 sein.');
    expect(parseDelta(null)).toBe('Geben Sie eine Änderung ein, z. B. 5 oder -2.');
    expect(parseReason('x'.repeat(201))).toBe('Der Grund darf höchstens 200 Zeichen lang sein.');
    expect(parsePrice('12.345')).toEqual({
      ok: false,
      error: 'Geben Sie einen Preis wie 12,50 ein (Ziffern, höchstens zwei nach dem Komma).',
    });
    speak('es');
    expect(parseQuantity(null)).toBe('Escribe una cantidad.');
    expect(parsePrice('1000000')).toEqual({ ok: false, error: 'Un precio es como máximo 999999,99.' });
    speak('en');
    expect(parseQuantity(0)).toBe('The quantity must be a whole number from 1 to 10,000.');
    expect(parsePrice('abc')).toEqual({ ok: false, error: 'Enter a price like 12.50 (digits, at most two after the point).' });
    expectNoMissingKeys();
  });
});

import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { localStatus } from '../src/dev/fixtures';
import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import { status } from '../src/lib/status.svelte';
import BackupPanel from '../src/screens/settings/BackupPanel.svelte';

const FIRST = '/home/shop/petstore-backup-2026-11-22.db';
const SECOND = '/home/shop/petstore-backup-2026-11-22-2.db';

function backend(more: Record<string, Handler> = {}) {
  let suggestions = 0;
  return mockBackend({
    suggest_backup_path: () => (suggestions++ === 0 ? FIRST : SECOND),
    backup_database: ({ to }) => to,
    get_status: () => localStatus({ target: '/home/shop/.local/share/petstore/petstore.db' }),
    ...more,
  });
}

describe('Backup panel', () => {
  it('proposes a dated file, backs up to it, says where, and proposes the next name', async () => {
    const b = backend();
    render(BackupPanel);
    const field = screen.getByTestId('backup-destination');
    await waitFor(() => expect(field).toHaveValue(FIRST));

    await userEvent.click(screen.getByTestId('backup-now'));
    expect(await screen.findByTestId('backup-result')).toHaveTextContent(`Backup written to ${FIRST}`);
    expect(b.argsOf('backup_database')).toEqual([{ to: FIRST }]);
    // That name is taken now: the field offers the next one.
    await waitFor(() => expect(field).toHaveValue(SECOND));
  });

  it('sends what was typed, trimmed', async () => {
    const b = backend();
    render(BackupPanel);
    const field = screen.getByTestId('backup-destination');
    await waitFor(() => expect(field).toHaveValue(FIRST));
    await userEvent.clear(field);
    await userEvent.type(field, '  ~/usb/shop.db  {Enter}');
    await waitFor(() => expect(b.argsOf('backup_database')).toEqual([{ to: '~/usb/shop.db' }]));
  });

  it('shows why a backup was refused, and no result', async () => {
    backend({
      backup_database: reject('validation_failed', '/home/shop/petstore-backup-2026-11-22.db already exists; not overwriting it', 400),
    });
    render(BackupPanel);
    await waitFor(() => expect(screen.getByTestId('backup-destination')).toHaveValue(FIRST));
    await userEvent.click(screen.getByTestId('backup-now'));
    expect(await screen.findByRole('alert')).toHaveTextContent('already exists; not overwriting it');
    expect(screen.queryByTestId('backup-result')).not.toBeInTheDocument();
  });

  it('asks for a destination before calling the app', async () => {
    const b = backend({ suggest_backup_path: reject('validation_failed', 'this system has no home folder', 400) });
    render(BackupPanel);
    await waitFor(() => expect(b.countOf('suggest_backup_path')).toBe(1));
    expect(screen.getByTestId('backup-destination')).toHaveValue('');
    await userEvent.click(screen.getByTestId('backup-now'));
    expect(await screen.findByRole('alert')).toHaveTextContent('Type where the backup goes');
    expect(b.countOf('backup_database')).toBe(0);
  });

  it('tells how to restore, naming the local database', async () => {
    backend();
    await status.refresh();
    render(BackupPanel);
    expect(screen.getByTestId('restore-command')).toHaveTextContent(
      'petstore-server restore --from BACKUP-FILE --db /home/shop/.local/share/petstore/petstore.db',
    );
  });
});

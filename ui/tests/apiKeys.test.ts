import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { apiKey as key, localStatus, TIME as T } from '../src/dev/fixtures';
import { mockBackend, reject, type Handler } from '../src/dev/mockBackend';
import type { KeyInfo } from '../src/lib/bindings/KeyInfo';
import { status } from '../src/lib/status.svelte';
import ApiKeysPanel from '../src/screens/settings/ApiKeysPanel.svelte';

const SECRET = 'psk_9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0';

/** A backend whose key list follows what the commands did. */
function backend(keys: KeyInfo[], more: Record<string, Handler> = {}) {
  let list = keys;
  return mockBackend({
    list_api_keys: () => list,
    create_api_key: ({ name, scope }) => {
      const made = key(name, { scope, prefix: SECRET.slice(0, 12) });
      list = [...list, made];
      return { key: made, secret: SECRET };
    },
    revoke_api_key: ({ name }) => {
      list = list.map((k) => (k.name === name ? { ...k, revokedAt: T } : k));
      return list.find((k) => k.name === name);
    },
    rotate_api_key: ({ name }) => ({ key: list.find((k) => k.name === name), secret: SECRET }),
    ...more,
  });
}

describe('API keys panel', () => {
  it('lists the keys with scope, prefix and status; only active keys can be revoked or rotated', async () => {
    backend([key('label printer'), key('till', { scope: 'write', prefix: 'psk_77aa88bb', revokedAt: T })]);
    render(ApiKeysPanel);
    const printer = await screen.findByTestId('api-key-row-label printer');
    expect(printer).toHaveTextContent('read');
    expect(printer).toHaveTextContent('psk_0a1b2c3d…');
    expect(printer).toHaveTextContent('active');
    expect(within(printer).getByTestId('revoke-api-key-label printer')).toBeInTheDocument();
    expect(within(printer).getByTestId('rotate-api-key-label printer')).toBeInTheDocument();

    const till = screen.getByTestId('api-key-row-till');
    expect(till).toHaveTextContent('write');
    expect(till).toHaveTextContent('revoked');
    expect(screen.queryByTestId('revoke-api-key-till')).not.toBeInTheDocument();
    expect(screen.queryByTestId('rotate-api-key-till')).not.toBeInTheDocument();
    expect(screen.queryByTestId('issued-secret')).not.toBeInTheDocument();
  });

  it('creates a key and shows its secret once, with Copy, until the panel is left', async () => {
    const b = backend([]);
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const panel = render(ApiKeysPanel);
    await screen.findByTestId('api-keys-empty');

    await userEvent.type(screen.getByTestId('new-api-key-name'), '  till ');
    await userEvent.selectOptions(screen.getByTestId('new-api-key-scope'), 'write');
    await userEvent.click(screen.getByTestId('create-api-key'));
    expect(await screen.findByTestId('issued-secret')).toHaveTextContent(SECRET);
    expect(b.argsOf('create_api_key')).toEqual([{ name: 'till', scope: 'write' }]);
    expect(screen.getByText(/it will not be shown again/)).toBeInTheDocument();
    expect(await screen.findByTestId('api-key-row-till')).toHaveTextContent('write');
    expect(screen.getByTestId('new-api-key-name')).toHaveValue('');

    await userEvent.click(screen.getByTestId('copy-issued-secret'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(SECRET));

    // Leaving Settings and coming back: the list is there, the secret is not.
    panel.unmount();
    render(ApiKeysPanel);
    await screen.findByTestId('api-key-row-till');
    expect(screen.queryByTestId('issued-secret')).not.toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(SECRET);
  });

  it('revokes only after confirmation', async () => {
    const b = backend([key('till')]);
    render(ApiKeysPanel);
    await userEvent.click(await screen.findByTestId('revoke-api-key-till'));
    expect(b.countOf('revoke_api_key')).toBe(0);
    await userEvent.click(screen.getByTestId('confirm'));
    await waitFor(() => expect(screen.getByTestId('api-key-row-till')).toHaveTextContent('revoked'));
    expect(b.argsOf('revoke_api_key')).toEqual([{ name: 'till' }]);
    expect(screen.queryByTestId('revoke-api-key-till')).not.toBeInTheDocument();
  });

  it('rotates only after confirmation and shows the new secret once', async () => {
    const b = backend([key('till')]);
    render(ApiKeysPanel);
    await userEvent.click(await screen.findByTestId('rotate-api-key-till'));
    expect(b.countOf('rotate_api_key')).toBe(0);
    expect(screen.queryByTestId('issued-secret')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('confirm'));
    expect(await screen.findByTestId('issued-secret')).toHaveTextContent(SECRET);
    expect(b.argsOf('rotate_api_key')).toEqual([{ name: 'till' }]);
  });

  it("shows the command's error in an alert and no secret", async () => {
    backend([key('till')], {
      create_api_key: reject('duplicate_name', 'an API key named "till" already exists'),
    });
    render(ApiKeysPanel);
    await userEvent.type(await screen.findByTestId('new-api-key-name'), 'till');
    await userEvent.click(screen.getByTestId('create-api-key'));
    expect(await screen.findByRole('alert')).toHaveTextContent('an API key named "till" already exists');
    expect(screen.queryByTestId('issued-secret')).not.toBeInTheDocument();
  });

  it('says that in remote mode the server manages its own keys', async () => {
    mockBackend({ list_api_keys: () => [], get_status: () => localStatus({ backend: 'remote' }) });
    await status.refresh();
    render(ApiKeysPanel);
    expect(await screen.findByText(/managed on the server with/)).toHaveTextContent('petstore-server keys');
  });
});

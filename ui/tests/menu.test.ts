import { emit } from '@tauri-apps/api/event';
import { afterEach, describe, expect, it } from 'vitest';

import { mockBackend } from '../src/dev/mockBackend';
import { followMenu } from '../src/lib/menu';
import { shortcuts } from '../src/lib/shortcuts.svelte';

describe('the native menu', () => {
  afterEach(() => {
    shortcuts.helpOpen = false;
  });

  it('opens the screen, the shortcuts and the API reference its entries name', async () => {
    const backend = mockBackend({ open_api_docs: () => null });
    const stop = await followMenu();
    await emit('menu', 'orders');
    expect(location.hash).toBe('#orders');
    await emit('menu', 'shortcuts');
    expect(shortcuts.helpOpen).toBe(true);
    await emit('menu', 'api-reference');
    expect(backend.countOf('open_api_docs')).toBe(1);
    await emit('menu', 'no-such-entry');
    expect(location.hash).toBe('#orders');
    stop();
    await emit('menu', 'sales');
    expect(location.hash).toBe('#orders');
  });
});

import { describe, expect, it } from 'vitest';

import { category, order, paged, pet, stockItem } from '../src/dev/fixtures';
import { mockBackend, reject } from '../src/dev/mockBackend';
import * as api from '../src/lib/api';
import { isCommandError, toCommandError } from '../src/lib/errors';

describe('api wrappers', () => {
  it('list_pets gets the full query, unused fields null or empty', async () => {
    const b = mockBackend({ list_pets: () => paged([pet(1, 'Rex')]) });
    const page = await api.listPets({ statuses: ['available'], q: 'rex', limit: 25, offset: 50 });
    expect(page.items[0].name).toBe('Rex');
    expect(b.calls).toEqual([
      {
        cmd: 'list_pets',
        args: {
          query: { statuses: ['available'], categoryId: null, q: 'rex', ids: [], sort: null, limit: 25, offset: 50 },
        },
      },
    ]);
  });

  it('pet commands pass id, pet and patch under their parameter names', async () => {
    const b = mockBackend({
      create_pet: () => pet(7, 'Bella'),
      replace_pet: () => pet(7, 'Bella'),
      update_pet: () => pet(7, 'Bella'),
      delete_pet: () => null,
      get_pet: () => pet(7, 'Bella'),
    });
    const body = { name: 'Bella', categoryId: 2, status: 'available' as const, description: null };
    await api.createPet(body);
    await api.replacePet(7, body);
    await api.updatePet(7, { status: 'sold' });
    await api.getPet(7);
    await expect(api.deletePet(7)).resolves.toBeNull();
    expect(b.calls).toEqual([
      { cmd: 'create_pet', args: { pet: body } },
      { cmd: 'replace_pet', args: { id: 7, pet: body } },
      { cmd: 'update_pet', args: { id: 7, patch: { status: 'sold' } } },
      { cmd: 'get_pet', args: { id: 7 } },
      { cmd: 'delete_pet', args: { id: 7 } },
    ]);
  });

  it('category commands, and listAllCategories walks every page of 100', async () => {
    const all = Array.from({ length: 150 }, (_, i) => category(i + 1, `C${i + 1}`));
    const b = mockBackend({
      list_categories: ({ page }) => {
        const { limit, offset } = page ?? { limit: 20, offset: 0 };
        return paged(all.slice(offset, offset + limit), all.length);
      },
      create_category: () => category(1, 'Dogs'),
      replace_category: () => category(1, 'Hounds'),
      delete_category: () => null,
    });
    expect(await api.listAllCategories()).toHaveLength(150);
    expect(b.argsOf('list_categories')).toEqual([
      { page: { limit: 100, offset: 0 } },
      { page: { limit: 100, offset: 100 } },
    ]);
    await api.listCategories();
    await api.createCategory({ name: 'Dogs', description: null });
    await api.replaceCategory(1, { name: 'Hounds', description: null });
    await api.deleteCategory(1);
    expect(b.calls.slice(2)).toEqual([
      { cmd: 'list_categories', args: { page: null } },
      { cmd: 'create_category', args: { category: { name: 'Dogs', description: null } } },
      { cmd: 'replace_category', args: { id: 1, category: { name: 'Hounds', description: null } } },
      { cmd: 'delete_category', args: { id: 1 } },
    ]);
  });

  it('order commands: complete is update_order with complete: true', async () => {
    const b = mockBackend({
      list_orders: () => paged([order(1, 2)]),
      place_order: () => order(3, 2),
      update_order: () => order(3, 2, { complete: true }),
      cancel_order: () => null,
    });
    await api.listOrders({ complete: false, limit: 25, offset: 0 });
    await api.placeOrder({ petId: 2, quantity: 3, shipDate: null, complete: true });
    await api.completeOrder(3);
    await api.cancelOrder(3);
    expect(b.calls).toEqual([
      { cmd: 'list_orders', args: { query: { petId: null, complete: false, limit: 25, offset: 0 } } },
      { cmd: 'place_order', args: { order: { petId: 2, quantity: 3, shipDate: null, complete: true } } },
      { cmd: 'update_order', args: { id: 3, patch: { complete: true } } },
      { cmd: 'cancel_order', args: { id: 3 } },
    ]);
  });

  it('inventory commands use petId, update and adjustment', async () => {
    const b = mockBackend({
      list_inventory: () => paged([stockItem(1, 'Rex', 2)]),
      get_inventory: () => stockItem(1, 'Rex', 2),
      set_inventory: () => stockItem(1, 'Rex', 9),
      adjust_inventory: () => stockItem(1, 'Rex', 7),
      stock_history: () => paged([]),
    });
    await api.listInventory({ belowQuantity: 5 });
    await api.getInventory(1);
    await api.setInventory(1, 9);
    await api.adjustInventory(1, -2, 'Damaged');
    await api.stockHistory(1, { limit: 20, offset: 0 });
    expect(b.calls).toEqual([
      { cmd: 'list_inventory', args: { query: { statuses: [], belowQuantity: 5, limit: null, offset: null } } },
      { cmd: 'get_inventory', args: { petId: 1 } },
      { cmd: 'set_inventory', args: { petId: 1, update: { quantity: 9 } } },
      { cmd: 'adjust_inventory', args: { petId: 1, adjustment: { delta: -2, reason: 'Damaged' } } },
      { cmd: 'stock_history', args: { petId: 1, page: { limit: 20, offset: 0 } } },
    ]);
  });

  it('settings commands: test_connection takes baseUrl and remoteKey', async () => {
    const view = { hasRemoteKey: false, backend: 'local', baseUrl: null, localApi: { enabled: true, port: 8787 } };
    const b = mockBackend({
      get_settings: () => view,
      save_settings: () => view,
      test_connection: () => ({ ok: true, message: 'ok' }),
      get_local_api_key: () => 'k1',
      regenerate_local_api_key: () => 'k2',
    });
    const input = { backend: 'local' as const, baseUrl: null, remoteKey: null, localApi: { enabled: true, port: 8787 } };
    await api.getSettings();
    await api.saveSettings(input);
    await api.testConnection('http://shop:8787', null);
    expect(await api.getLocalApiKey()).toBe('k1');
    expect(await api.regenerateLocalApiKey()).toBe('k2');
    expect(b.calls.map((c) => [c.cmd, c.args])).toEqual([
      ['get_settings', {}],
      ['save_settings', { settings: input }],
      ['test_connection', { baseUrl: 'http://shop:8787', remoteKey: null }],
      ['get_local_api_key', {}],
      ['regenerate_local_api_key', {}],
    ]);
  });

  it('a command failure rejects with the CommandError object as is', async () => {
    mockBackend({ place_order: reject('insufficient_stock', 'Rex (#2) has 1 in stock; 3 more were asked for') });
    await expect(api.placeOrder({ petId: 2, quantity: 3, shipDate: null, complete: false })).rejects.toEqual({
      code: 'insufficient_stock',
      message: 'Rex (#2) has 1 in stock; 3 more were asked for',
      status: 409,
    });
  });

  it('a failure before the command (a plain string) is normalized to a CommandError', async () => {
    mockBackend({});
    const error = await api.getStatus().catch((e: unknown) => e);
    expect(isCommandError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'internal', message: 'command get_status not mocked' });
    expect(toCommandError(new Error('boom'))).toEqual({ code: 'internal', message: 'boom', status: 500 });
  });
});

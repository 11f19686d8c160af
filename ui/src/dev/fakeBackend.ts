// An in-memory stand-in for the Tauri backend, for looking at the UI in a plain browser
// (`npm run dev:mock`, `npm run build:mock`). It follows the business rules of DESIGN.md 4
// closely enough to click through every screen; it is never part of the production build.
import { emit } from '@tauri-apps/api/event';
import { mockIPC } from '@tauri-apps/api/mocks';

import type { Category } from '../lib/bindings/Category';
import type { Change } from '../lib/bindings/Change';
import type { CommandError } from '../lib/bindings/CommandError';
import type { ErrorCode } from '../lib/bindings/ErrorCode';
import type { InventoryAdjustment } from '../lib/bindings/InventoryAdjustment';
import type { InventoryItem } from '../lib/bindings/InventoryItem';
import type { InventoryQuery } from '../lib/bindings/InventoryQuery';
import type { KeyInfo } from '../lib/bindings/KeyInfo';
import type { NewCategory } from '../lib/bindings/NewCategory';
import type { NewOrder } from '../lib/bindings/NewOrder';
import type { NewPet } from '../lib/bindings/NewPet';
import type { Order } from '../lib/bindings/Order';
import type { OrderPatch } from '../lib/bindings/OrderPatch';
import type { OrderQuery } from '../lib/bindings/OrderQuery';
import type { PageQuery } from '../lib/bindings/PageQuery';
import type { Pet } from '../lib/bindings/Pet';
import type { PetQuery } from '../lib/bindings/PetQuery';
import type { SettingsInput } from '../lib/bindings/SettingsInput';
import type { SettingsView } from '../lib/bindings/SettingsView';
import type { Status } from '../lib/bindings/Status';

type Args = Record<string, unknown>;

const fail = (status: number, code: ErrorCode, message: string): CommandError => ({ code, message, status });
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function page<T>(items: T[], q: PageQuery | null) {
  const offset = q?.offset ?? 0;
  const limit = q?.limit ?? 20;
  return { items: items.slice(offset, offset + limit), total: items.length };
}

export function createFakeBackend() {
  const categories: Category[] = [];
  const pets: Pet[] = [];
  const stock = new Map<number, { quantity: number; updatedAt: string }>();
  const orders: Order[] = [];
  const adjustments: InventoryAdjustment[] = [];
  let nextId = { category: 1, pet: 1, order: 1, adjustment: 1 };
  let settings: SettingsView = {
    backend: 'local',
    baseUrl: null,
    hasRemoteKey: false,
    remoteKeyStorage: 'keyring',
    keyringError: null,
    localApi: { enabled: true, port: 8787 },
  };
  let localKey = 'psk_3f9a1c0d7e5b42a8b61f0c2d9e4a7b13';
  const apiKeys: KeyInfo[] = [];

  const CATS = ['Dogs', 'Cats', 'Birds', 'Fish', 'Small animals'];
  const NAMES: Record<string, string[]> = {
    Dogs: ['Rex', 'Bella', 'Max', 'Luna', 'Charlie', 'Daisy', 'Buddy', 'Rocky', 'Molly', 'Bailey', 'Cooper', 'Sadie'],
    Cats: ['Whiskers', 'Mittens', 'Shadow', 'Tiger', 'Cleo', 'Simba', 'Oliver', 'Nala', 'Felix', 'Misty'],
    Birds: ['Tweety', 'Kiwi', 'Sunny', 'Rio', 'Pip', 'Mango', 'Skye'],
    Fish: ['Nemo', 'Bubbles', 'Finn', 'Goldie', 'Splash', 'Coral', 'Dory', 'Gill'],
    'Small animals': ['Hazel', 'Peanut', 'Clover', 'Biscuit', 'Pepper', 'Thumper', 'Nibbles'],
  };
  const DESCRIPTIONS = ['Friendly and calm', 'Loves to play', 'Good with children', null, 'Vaccinated', null];

  for (const name of CATS) {
    categories.push({ id: nextId.category++, name, description: null, petCount: 0, createdAt: daysAgo(90) });
  }
  let i = 0;
  for (const c of categories) {
    for (const name of NAMES[c.name]) {
      const id = nextId.pet++;
      const quantity = [0, 1, 2, 3, 5, 8, 12, 4, 0, 7][i % 10];
      pets.push({
        id,
        name,
        categoryId: c.id,
        status: quantity > 0 ? 'available' : i % 3 === 0 ? 'sold' : 'pending',
        description: DESCRIPTIONS[i % DESCRIPTIONS.length],
        createdAt: daysAgo(60 - i),
        updatedAt: daysAgo(30 - (i % 30)),
      });
      stock.set(id, { quantity, updatedAt: daysAgo(i % 20) });
      i += 1;
    }
  }
  for (const [petId, qty, complete, age] of [
    [30, 2, false, 4],
    [5, 1, true, 3],
    [22, 3, true, 2],
    [14, 1, false, 1],
    [3, 2, false, 0.5],
    [1, 1, false, 0.1],
  ] as const) {
    orders.unshift({
      id: nextId.order++,
      petId,
      quantity: qty,
      shipDate: complete ? daysAgo(age - 0.05) : age > 1 ? daysAgo(-3) : null,
      complete,
      createdAt: daysAgo(age),
    });
  }
  for (const petId of [1, 3, 5]) {
    for (const [delta, reason, age] of [
      [10, 'Delivery received', 20],
      [-1, 'Damaged', 10],
      [2, 'Returned by customer', 5],
    ] as const) {
      adjustments.unshift({
        id: nextId.adjustment++,
        petId,
        delta,
        reason,
        quantityAfter: Math.max(0, (stock.get(petId)?.quantity ?? 0) + delta),
        createdAt: daysAgo(age),
      });
    }
  }

  function pet(id: number): Pet {
    const p = pets.find((x) => x.id === id);
    if (!p) throw fail(404, 'not_found', `Pet ${id} does not exist.`);
    return p;
  }

  function item(p: Pet): InventoryItem {
    const s = stock.get(p.id)!;
    return { petId: p.id, petName: p.name, status: p.status, quantity: s.quantity, updatedAt: s.updatedAt };
  }

  function checkName(name: string, what: string) {
    const n = name.trim();
    if (n.length < 1 || n.length > 100) throw fail(400, 'validation_failed', `${what} name must be 1 to 100 characters.`);
    return n;
  }

  // Status after a stock change (DESIGN.md 4).
  function restatus(p: Pet) {
    const q = stock.get(p.id)!.quantity;
    const open = orders.some((o) => o.petId === p.id && !o.complete);
    if (q > 0 && p.status !== 'available') p.status = 'available';
    else if (q === 0 && p.status === 'available') p.status = open ? 'pending' : 'sold';
    p.updatedAt = now();
  }

  function setQuantity(p: Pet, quantity: number) {
    stock.set(p.id, { quantity, updatedAt: now() });
  }

  const handlers: Record<string, (a: Args) => unknown> = {
    list_pets: (a) => {
      const q = a.query as PetQuery;
      let list = pets.filter(
        (p) =>
          (q.statuses.length === 0 || q.statuses.includes(p.status)) &&
          (q.categoryId === null || p.categoryId === q.categoryId) &&
          (!q.q || p.name.toLowerCase().includes(q.q.toLowerCase())) &&
          (q.ids.length === 0 || q.ids.includes(p.id)),
      );
      const sort = q.sort ?? 'id';
      const key = sort.replace('-', '');
      list = [...list].sort((x, y) => (key === 'name' ? x.name.localeCompare(y.name) : x.id - y.id));
      if (sort.startsWith('-')) list.reverse();
      return page(list, q);
    },
    create_pet: (a) => {
      const n = a.pet as NewPet;
      const p: Pet = { id: nextId.pet++, ...n, name: checkName(n.name, 'A pet'), createdAt: now(), updatedAt: now() };
      pets.push(p);
      stock.set(p.id, { quantity: 0, updatedAt: now() });
      return changed('pets', p);
    },
    get_pet: (a) => pet(a.id as number),
    replace_pet: (a) => {
      const p = pet(a.id as number);
      Object.assign(p, a.pet as NewPet, { name: checkName((a.pet as NewPet).name, 'A pet'), updatedAt: now() });
      return changed('pets', p);
    },
    delete_pet: (a) => {
      const p = pet(a.id as number);
      if (orders.some((o) => o.petId === p.id))
        throw fail(409, 'pet_has_orders', `Pet ${p.id} has orders and cannot be deleted.`);
      pets.splice(pets.indexOf(p), 1);
      return changed('pets', null);
    },
    list_categories: (a) => {
      for (const c of categories) c.petCount = pets.filter((p) => p.categoryId === c.id).length;
      return page(categories, a.page as PageQuery | null);
    },
    create_category: (a) => {
      const n = a.category as NewCategory;
      const name = checkName(n.name, 'A category');
      if (categories.some((c) => c.name.toLowerCase() === name.toLowerCase()))
        throw fail(409, 'duplicate_name', `A category named "${name}" already exists.`);
      const c: Category = { id: nextId.category++, name, description: n.description, petCount: 0, createdAt: now() };
      categories.push(c);
      return changed('categories', c);
    },
    replace_category: (a) => {
      const c = categories.find((x) => x.id === a.id);
      if (!c) throw fail(404, 'not_found', `Category ${a.id} does not exist.`);
      const n = a.category as NewCategory;
      Object.assign(c, { name: checkName(n.name, 'A category'), description: n.description });
      return changed('categories', c);
    },
    delete_category: (a) => {
      const c = categories.find((x) => x.id === a.id);
      if (!c) throw fail(404, 'not_found', `Category ${a.id} does not exist.`);
      const count = pets.filter((p) => p.categoryId === c.id).length;
      if (count > 0)
        throw fail(409, 'category_in_use', `Category ${c.id} (${c.name}) still has ${count} pets and cannot be deleted.`);
      categories.splice(categories.indexOf(c), 1);
      return changed('categories', null);
    },
    list_orders: (a) => {
      const q = a.query as OrderQuery;
      const list = orders.filter(
        (o) => (q.petId === null || o.petId === q.petId) && (q.complete === null || o.complete === q.complete),
      );
      return page(list, q);
    },
    place_order: (a) => {
      const n = a.order as NewOrder;
      const p = pet(n.petId);
      const s = stock.get(p.id)!;
      if (p.status !== 'available') throw fail(409, 'pet_not_available', `Pet ${p.id} is ${p.status}, not available.`);
      if (s.quantity < n.quantity)
        throw fail(409, 'insufficient_stock', `Pet ${p.id} has ${s.quantity} in stock; ${n.quantity} were ordered.`);
      setQuantity(p, s.quantity - n.quantity);
      const o: Order = {
        id: nextId.order++,
        petId: p.id,
        quantity: n.quantity,
        shipDate: n.shipDate ?? (n.complete ? now() : null),
        complete: n.complete,
        createdAt: now(),
      };
      orders.unshift(o);
      if (stock.get(p.id)!.quantity === 0) p.status = n.complete && !orders.some((x) => x.petId === p.id && !x.complete) ? 'sold' : 'pending';
      return changed('orders', o);
    },
    update_order: (a) => {
      const o = orders.find((x) => x.id === a.id);
      if (!o) throw fail(404, 'not_found', `Order ${a.id} does not exist.`);
      if (o.complete) throw fail(409, 'order_completed', `Order ${o.id} is completed and can no longer change.`);
      const patch = a.patch as OrderPatch;
      if (patch.complete) {
        o.complete = true;
        o.shipDate ??= now();
        const p = pet(o.petId);
        if (stock.get(p.id)!.quantity === 0 && !orders.some((x) => x.petId === p.id && !x.complete)) p.status = 'sold';
      }
      return changed('orders', o);
    },
    cancel_order: (a) => {
      const o = orders.find((x) => x.id === a.id);
      if (!o) throw fail(404, 'not_found', `Order ${a.id} does not exist.`);
      if (o.complete) throw fail(409, 'order_completed', `Order ${o.id} is completed and cannot be cancelled.`);
      orders.splice(orders.indexOf(o), 1);
      const p = pet(o.petId);
      setQuantity(p, stock.get(p.id)!.quantity + o.quantity);
      restatus(p);
      return changed('orders', null);
    },
    list_inventory: (a) => {
      const q = a.query as InventoryQuery;
      const list = pets
        .map(item)
        .filter(
          (it) =>
            (q.statuses.length === 0 || q.statuses.includes(it.status)) &&
            (q.belowQuantity === null || it.quantity < q.belowQuantity),
        )
        .sort((x, y) => x.quantity - y.quantity || x.petId - y.petId);
      return page(list, q);
    },
    get_inventory: (a) => item(pet(a.petId as number)),
    set_inventory: (a) => {
      const p = pet(a.petId as number);
      const quantity = (a.update as { quantity: number }).quantity;
      setQuantity(p, quantity);
      restatus(p);
      return changed('inventory', item(p));
    },
    adjust_inventory: (a) => {
      const p = pet(a.petId as number);
      const { delta, reason } = a.adjustment as { delta: number; reason: string };
      const after = stock.get(p.id)!.quantity + delta;
      if (after < 0) throw fail(409, 'insufficient_stock', `Pet ${p.id} has only ${after - delta} in stock.`);
      setQuantity(p, after);
      restatus(p);
      adjustments.unshift({ id: nextId.adjustment++, petId: p.id, delta, reason, quantityAfter: after, createdAt: now() });
      return changed('inventory', item(p));
    },
    list_adjustments: (a) =>
      page(
        adjustments.filter((x) => x.petId === a.petId),
        a.page as PageQuery | null,
      ),
    get_settings: () => settings,
    save_settings: (a) => {
      const s = a.settings as SettingsInput;
      settings = {
        backend: s.backend,
        baseUrl: s.baseUrl,
        localApi: s.localApi,
        hasRemoteKey: s.remoteKey === '' ? false : settings.hasRemoteKey || s.remoteKey !== null,
        remoteKeyStorage: settings.remoteKeyStorage,
        keyringError: settings.keyringError,
      };
      return settings;
    },
    test_connection: (a) =>
      String(a.baseUrl).includes('localhost') || String(a.baseUrl).includes('127.0.0.1')
        ? { ok: true, message: 'Connected: Petstore API 1.0.0, key accepted.' }
        : { ok: false, message: `Could not connect to ${a.baseUrl}: connection refused.` },
    get_status: (): Status => ({
      backend: settings.backend,
      target: settings.backend === 'local' ? '/home/shop/.local/share/petstore/petstore.db' : (settings.baseUrl ?? ''),
      reachable: settings.backend === 'local',
      message: settings.backend === 'local' ? null : 'connection refused',
      localApi: settings.localApi.enabled
        ? settings.localApi.port === 8788
          ? { enabled: true, address: null, error: 'port 8788 is already in use' }
          : { enabled: true, address: `http://127.0.0.1:${settings.localApi.port}`, error: null }
        : { enabled: false, address: null, error: null },
      remoteKeyStorage: settings.backend === 'local' ? null : settings.remoteKeyStorage,
    }),
    get_local_api_key: () => localKey,
    regenerate_local_api_key: () => {
      localKey = `psk_${crypto.randomUUID().replaceAll('-', '')}`;
      return localKey;
    },
    // Named keys: the app keeps only hashes, so a secret is in the answer of create/rotate only.
    list_api_keys: () => apiKeys,
    create_api_key: (a) => {
      const name = String(a.name ?? '').trim();
      if (name === '') throw fail(400, 'validation_failed', 'name: name must not be blank');
      if (a.scope !== 'read' && a.scope !== 'write')
        throw fail(400, 'validation_failed', `scope: unknown variant \`${a.scope}\`, expected \`read\` or \`write\``);
      if (apiKeys.some((k) => k.name === name)) throw fail(409, 'duplicate_name', `an API key named "${name}" already exists`);
      const secret = `psk_${crypto.randomUUID().replaceAll('-', '')}`;
      const key: KeyInfo = { name, scope: a.scope, prefix: secret.slice(0, 12), createdAt: now(), rotatedAt: null, revokedAt: null };
      apiKeys.push(key);
      apiKeys.sort((x, y) => x.name.localeCompare(y.name));
      return { key, secret };
    },
    revoke_api_key: (a) => {
      const key = activeKey(String(a.name));
      key.revokedAt = now();
      return key;
    },
    rotate_api_key: (a) => {
      const key = activeKey(String(a.name));
      const secret = `psk_${crypto.randomUUID().replaceAll('-', '')}`;
      key.prefix = secret.slice(0, 12);
      key.rotatedAt = now();
      return { key, secret };
    },
  };

  function activeKey(name: string): KeyInfo {
    const key = apiKeys.find((k) => k.name === name);
    if (!key) throw fail(404, 'not_found', `there is no API key named "${name}"`);
    if (key.revokedAt) throw fail(410, 'gone', `the API key "${name}" was revoked; create a new key instead`);
    return key;
  }

  function changed<T>(change: Change, value: T): T {
    // Like the app: tell the window after the write, from "outside" the call.
    setTimeout(() => void emit('petstore://changed', change), 0);
    return value;
  }

  return async (cmd: string, args: Args = {}) => {
    const handler = handlers[cmd];
    if (!handler) throw `command ${cmd} not found`;
    // A little latency, so loading states and "Saving…" can be seen.
    await new Promise((r) => setTimeout(r, 120));
    return structuredClone(handler(args));
  };
}

export function installFakeBackend() {
  mockIPC(createFakeBackend() as (cmd: string, payload?: unknown) => unknown, { shouldMockEvents: true });
}

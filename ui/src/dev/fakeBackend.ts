// Mock mode (`npm run dev:mock`, `npm run build:mock`): the UI in a plain browser, with a
// small shop made of the fixtures the UI tests use, answered by the tests' mockBackend.
// Lists are filtered, sorted and paged as asked, so every screen can be looked at. Writes
// are answered as the app answers a success, but nothing is kept and no business rule runs:
// those live in the Rust store alone, where the contract suite checks them, and a copy here
// would drift. To see them at work, run the app. Never part of the production build.
import type { InventoryQuery } from '../lib/bindings/InventoryQuery';
import type { OrderQuery } from '../lib/bindings/OrderQuery';
import type { PageQuery } from '../lib/bindings/PageQuery';
import type { PetQuery } from '../lib/bindings/PetQuery';
import type { SettingsInput } from '../lib/bindings/SettingsInput';
import {
  apiKey,
  category,
  localStatus,
  order,
  paged,
  pet,
  salesDay,
  settingsView,
  shopSettings,
  stockEntry,
  stockItem,
  staffMember,
  activityEntry,
} from './fixtures';
import { lineTotal } from '../lib/money';
import { mockBackend, type Handler } from './mockBackend';

const CATEGORIES: Record<string, string[]> = {
  Dogs: ['Rex', 'Bella', 'Max', 'Luna', 'Charlie', 'Daisy', 'Buddy', 'Rocky', 'Molly', 'Bailey', 'Cooper', 'Sadie'],
  Cats: ['Whiskers', 'Mittens', 'Shadow', 'Tiger', 'Cleo', 'Simba', 'Oliver', 'Nala', 'Felix', 'Misty'],
  Birds: ['Tweety', 'Kiwi', 'Sunny', 'Rio', 'Pip', 'Mango', 'Skye'],
  Fish: ['Nemo', 'Bubbles', 'Finn', 'Goldie', 'Splash', 'Coral', 'Dory', 'Gill'],
  'Small animals': ['Hazel', 'Peanut', 'Clover', 'Biscuit', 'Pepper', 'Thumper', 'Nibbles'],
};
const DESCRIPTIONS = ['Friendly and calm', 'Loves to play', 'Good with children', null, 'Vaccinated', null];

// A price per category; the barcodes are EAN-13-like: 400 and the id.
const PRICES = ['249.00', '149.00', '39.90', '4.50', '19.95'];
const categories = Object.entries(CATEGORIES).map(([name, names], i) => category(i + 1, name, names.length));
const pets = categories.flatMap((c) => CATEGORIES[c.name].map((name) => ({ name, categoryId: c.id })));
const stock = pets.map((_, i) => [0, 1, 2, 3, 5, 8, 12, 4, 0, 7][i % 10]);
const PETS = pets.map(({ name, categoryId }, i) =>
  pet(i + 1, name, {
    categoryId,
    status: stock[i] > 0 ? 'available' : i % 3 === 0 ? 'sold' : 'pending',
    description: DESCRIPTIONS[i % DESCRIPTIONS.length],
    price: PRICES[categoryId - 1],
    sku: `400${String(i + 1).padStart(10, '0')}`,
  }),
);
const STOCK = PETS.map((p, i) => stockItem(p.id, p.name, stock[i], { status: p.status }));
// Priced as the pet is; the collect-later ones name their customer.
const ORDERS = [
  order(6, 1),
  order(5, 3, { quantity: 2, customerName: 'Ana García', customerPhone: '+34 600 123 456' }),
  order(4, 14),
  order(3, 22, { quantity: 3, complete: true, shipDate: '2026-11-21T09:00:00Z', completedAt: '2026-11-21T09:05:00Z' }),
  order(2, 5, { complete: true, shipDate: '2026-11-20T16:30:00Z', completedAt: '2026-11-20T16:31:00Z' }),
  order(1, 30, { quantity: 2, shipDate: '2026-11-25T00:00:00Z', note: 'Collects Saturday' }),
  order(7, 9, { customerName: 'Tom Weber', note: 'Changed his mind', cancelledAt: '2026-11-22T10:40:00Z' }),
].map((o) => {
  const unitPrice = PETS[o.petId - 1].price;
  return { ...o, unitPrice, total: lineTotal(unitPrice, o.quantity) };
});
// Two weeks of takings up to the fixtures' day, for the Sales screen.
const SALES = Array.from({ length: 14 }, (_, i) => {
  const day = new Date(Date.UTC(2026, 10, 9 + i)).toISOString().slice(0, 10);
  const orders = [3, 5, 2, 8, 6, 0, 4, 7, 9, 3, 5, 6, 2, 4][i];
  return salesDay(day, orders, orders + (i % 3), `${orders * 87}.${(i * 7) % 10}0`);
});
// The stock history of every pet, newest first, ending at its stock now: a delivery, a
// damaged one, an order placed and cancelled, a counter sale. Each names who did it, as the
// app keeps it (the History dialog's By column): Ana at the till, Bea approving her
// adjustment, nobody for the delivery from before the shop kept staff.
const history = (petId: number) => {
  const now = stock[petId - 1];
  const ana = { staff: ref(2) };
  return [
    stockEntry('counter_sale', -1, now, { orderId: 40 + petId, at: '2026-11-22T11:00:00Z', by: ana }),
    stockEntry('order_cancelled', 2, now + 1, { orderId: 20 + petId, at: '2026-11-22T10:30:00Z', by: ana }),
    stockEntry('order_placed', -2, now - 1, { orderId: 20 + petId, at: '2026-11-22T10:00:00Z', by: ana }),
    stockEntry('adjusted', -1, now + 1, { reason: 'Damaged', at: '2026-11-21T16:00:00Z', by: { ...ana, approvedBy: ref(3) } }),
    stockEntry('adjusted', now + 2, now + 2, { reason: 'Delivery received', at: '2026-11-21T09:00:00Z' }),
  ];
};
const API_KEYS = [apiKey('label printer'), apiKey('till', { scope: 'write', prefix: 'psk_77aa88bb' })];

function page<T>(items: T[], q: PageQuery | null) {
  const offset = q?.offset ?? 0;
  return paged(items.slice(offset, offset + (q?.limit ?? 20)), items.length);
}

const byId = <T extends { id: number }>(items: T[], id: number) => items.find((x) => x.id === id);
const secret = () => `psk_${crypto.randomUUID().replaceAll('-', '')}`;
let nextId = 1000;

const handlers: Record<string, Handler> = {
  list_pets: ({ query }) => {
    const q: PetQuery = query;
    const list = PETS.filter(
      (p) =>
        (q.statuses.length === 0 || q.statuses.includes(p.status)) &&
        (q.categoryId === null || p.categoryId === q.categoryId) &&
        (!q.q || p.name.toLowerCase().includes(q.q.toLowerCase())) &&
        // The loose search's typo is the server's: here, the name or the description.
        (!q.search || `${p.name} ${p.description ?? ''}`.toLowerCase().includes(q.search.toLowerCase())) &&
        (!q.sku || p.sku?.toLowerCase() === q.sku.toLowerCase()) &&
        (q.ids.length === 0 || q.ids.includes(p.id)),
    );
    const sort = q.sort ?? 'id';
    list.sort((x, y) => (sort.endsWith('name') ? x.name.localeCompare(y.name) : x.id - y.id));
    return page(sort.startsWith('-') ? list.reverse() : list, q);
  },
  // The Pets screen's rows: the same page, each pet with its stock, as the app answers.
  list_pet_rows: (args) => {
    const found = handlers.list_pets(args) as ReturnType<typeof page<(typeof PETS)[number]>>;
    return { ...found, items: found.items.map((p) => ({ ...p, stock: STOCK.find((s) => s.petId === p.id)?.quantity ?? null })) };
  },
  get_pet: ({ id }) => byId(PETS, id),
  list_categories: ({ page: p }) => page(categories, p),
  list_orders: ({ query }) => {
    const q: OrderQuery = query;
    // Cancelled orders only on the Cancelled tab, as the store lists them.
    return page(
      ORDERS.filter(
        (o) =>
          (q.petId === null || o.petId === q.petId) &&
          (q.complete === null || o.complete === q.complete) &&
          (o.cancelledAt !== null) === !!q.cancelled,
      ).sort((x, y) => y.id - x.id),
      q,
    );
  },
  list_inventory: ({ query }) => {
    const q: InventoryQuery = query;
    return page(
      STOCK.filter(
        (s) =>
          (q.statuses.length === 0 || q.statuses.includes(s.status)) &&
          (q.belowQuantity === null || s.quantity < q.belowQuantity),
      ).sort((x, y) => x.quantity - y.quantity || x.petId - y.petId),
      q,
    );
  },
  get_inventory: ({ petId }) => STOCK.find((s) => s.petId === petId),
  stock_history: ({ petId, page: p }) => page(history(petId), p),
  startup_failure: () => null,
  get_update_settings: () => ({ address: null, canInstall: false, currentVersion: '1.0.0' }),
  get_settings: () => settingsView(),
  // `?theme=dark` (or light) in the address shows that theme, for screenshots.
  get_preferences: () => ({ theme: new URLSearchParams(location.search).get('theme') ?? 'system' }),
  get_status: () => localStatus({ target: '/home/shop/.local/share/org.petstore.desktop/petstore.db' }),
  test_connection: ({ baseUrl }) => ({ ok: false, message: `Mock mode: nothing at ${baseUrl} to connect to.` }),
  // Local mode: nothing to sync, an empty outbox.
  get_sync_status: () => null,
  list_outbox: () => [],
  get_local_api_key: () => 'psk_3f9a1c0d7e5b42a8b61f0c2d9e4a7b13',
  list_api_keys: () => API_KEYS,
  suggest_backup_path: () => '/home/shop/petstore-backup-2026-11-22.db',
  get_shop_settings: () => shopSettings(),
  sales_report: ({ from, to }) => SALES.filter((d) => d.date >= from && d.date <= to),
  choose_file: ({ choice }) => (choice.kind === 'save' ? `/home/shop/${choice.name}` : '/home/shop/pets.csv'),

  // Writes: the answer of a success, from what was sent; nothing changes.
  create_pet: ({ pet: p }) => pet(nextId++, p.name, p),
  replace_pet: ({ id, pet: p }) => pet(id, p.name, p),
  delete_pet: () => null,
  create_category: ({ category: c }) => category(nextId++, c.name, 0, c),
  replace_category: ({ id, category: c }) => ({ ...byId(categories, id), ...c }),
  delete_category: () => null,
  place_order: ({ order: o }) => order(nextId++, o.petId, o),
  // Completing stamps when; complete: false (the Undo) clears it again.
  update_order: ({ id, patch }) => {
    const completedAt = patch.complete === undefined ? {} : { completedAt: patch.complete ? new Date().toISOString() : null };
    return { ...byId(ORDERS, id), ...patch, ...completedAt };
  },
  cancel_order: () => null,
  set_inventory: ({ petId, update }) => ({ ...STOCK.find((s) => s.petId === petId), quantity: update.quantity }),
  adjust_inventory: ({ petId, adjustment: a }) => {
    const item = STOCK.find((s) => s.petId === petId)!;
    return { ...item, quantity: item.quantity + a.delta };
  },
  save_settings: ({ settings }) => {
    const s: SettingsInput = settings;
    return settingsView({ backend: s.backend, baseUrl: s.baseUrl, localApi: s.localApi, hasRemoteKey: !!s.remoteKey });
  },
  regenerate_local_api_key: secret,
  create_api_key: ({ name, scope }) => {
    const s = secret();
    return { key: apiKey(name, { scope, prefix: s.slice(0, 12) }), secret: s };
  },
  revoke_api_key: ({ name }) => ({ ...API_KEYS.find((k) => k.name === name), revokedAt: new Date().toISOString() }),
  rotate_api_key: ({ name }) => ({ key: API_KEYS.find((k) => k.name === name), secret: secret() }),
  backup_database: ({ to }) => to,
  save_shop_settings: ({ settings }) => settings,
  save_preferences: ({ preferences }) => preferences,
  export_csv: () => 48_213,
  import_pets_csv: ({ createCategories, dryRun }) => ({
    pets: 120,
    categoriesCreated: createCategories ? ['Reptiles'] : [],
    dryRun,
  }),
};

// Staff at the till: Ana (cashier) serving, Bea the manager, the owner.
const STAFF = [
  staffMember(1, 'Owner', 'owner'),
  staffMember(2, 'Ana', 'cashier'),
  staffMember(3, 'Bea', 'manager'),
];
const ref = (id: number) => {
  const m = STAFF.find((s) => s.id === id)!;
  return { id: m.id, name: m.name, role: m.role };
};
// What each is about is named by the screen from the pets, categories and staff; pet 99
// was deleted since, so it keeps its number.
const ACTIVITY = [
  activityEntry(5, 'category_updated', { staff: ref(3) }, { entity: 'category', id: '2' }, null),
  activityEntry(4, 'pet_deleted', { staff: ref(3) }, { entity: 'pet', id: '99' }, 'Goldie'),
  activityEntry(3, 'stock_counted', { staff: ref(2), approvedBy: ref(3) }, { entity: 'pet', id: '4' }, '12 (was 9)'),
  activityEntry(2, 'order_placed', { staff: ref(2) }, { entity: 'order', id: '6' }, null),
  activityEntry(1, 'signed_in', { staff: ref(2) }, { entity: 'staff', id: '2' }, 'shift'),
];
Object.assign(handlers, {
  current_staff: () => ({ staff: ref(2), alone: false, remote: false }),
  list_staff: () => STAFF,
  sign_in: ({ staffId }) => ({ staff: ref(staffId), alone: false, remote: false }),
  sign_out: () => ({ staff: null, alone: false, remote: false }),
  approve: ({ staffId }) => ref(staffId),
  create_staff: ({ member }) =>
    staffMember(STAFF.length + 1, member.name, member.role),
  update_staff: ({ staffId, patch }) => ({
    ...STAFF.find((m) => m.id === staffId)!,
    ...patch,
  }),
  list_activity: () => paged(ACTIVITY),
  export_activity_csv: () => 2_048,
  get_till_lock: () => ({ idleMinutes: 5 }),
  save_till_lock: ({ lock }) => lock,
} satisfies Record<string, Handler>);

/** The pause before each answer, so loading states and "Saving…" can be seen. */
export function installFakeBackend(latencyMs = 120) {
  mockBackend(handlers, { latencyMs });
}

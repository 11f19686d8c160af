// Records as the app's commands return them, shared by the UI tests and mock mode, so that
// a change to a generated binding breaks the type check of both in the same place.

import type { ActivityEntry } from '../lib/bindings/ActivityEntry';
import type { ActivityKind } from '../lib/bindings/ActivityKind';
import type { Actor } from '../lib/bindings/Actor';
import type { Role } from '../lib/bindings/Role';
import type { StaffMember } from '../lib/bindings/StaffMember';
import type { Subject } from '../lib/bindings/Subject';
import type { Category } from '../lib/bindings/Category';
import type { InventoryItem } from '../lib/bindings/InventoryItem';
import type { KeyInfo } from '../lib/bindings/KeyInfo';
import type { Order } from '../lib/bindings/Order';
import type { Pet } from '../lib/bindings/Pet';
import type { SalesDay } from '../lib/bindings/SalesDay';
import type { SettingsView } from '../lib/bindings/SettingsView';
import type { ShopSettings } from '../lib/bindings/ShopSettings';
import type { Status } from '../lib/bindings/Status';
import type { StockEntry } from '../lib/bindings/StockEntry';
import type { StockEntryKind } from '../lib/bindings/StockEntryKind';

/** When every fixture was made, unless it says otherwise. */
export const TIME = '2026-11-22T10:15:00Z';

export const pet = (id: number, name: string, more: Partial<Pet> = {}): Pet => ({
  id,
  name,
  categoryId: 1,
  status: 'available',
  description: null,
  price: null,
  sku: null,
  createdAt: TIME,
  updatedAt: TIME,
  ...more,
});

export const category = (id: number, name: string, petCount = 0, more: Partial<Category> = {}): Category => ({
  id,
  name,
  description: null,
  petCount,
  createdAt: TIME,
  ...more,
});

export const order = (id: number, petId: number, more: Partial<Order> = {}): Order => ({
  id,
  petId,
  quantity: 1,
  shipDate: null,
  complete: false,
  createdAt: TIME,
  placedAt: null,
  unitPrice: null,
  total: null,
  completedAt: null,
  customerName: null,
  customerPhone: null,
  note: null,
  cancelledAt: null,
  placedBy: null,
  completedBy: null,
  cancelledBy: null,
  ...more,
});

export const stockItem = (petId: number, petName: string, quantity: number, more: Partial<InventoryItem> = {}) =>
  ({ petId, petName, status: 'available', quantity, updatedAt: TIME, ...more }) satisfies InventoryItem;

export const stockEntry = (kind: StockEntryKind, delta: number, stockAfter: number, more: Partial<StockEntry> = {}): StockEntry => ({
  kind,
  delta,
  at: TIME,
  reason: null,
  orderId: null,
  stockAfter,
  by: null,
  ...more,
});

export const apiKey = (name: string, more: Partial<KeyInfo> = {}): KeyInfo => ({
  name,
  scope: 'read',
  prefix: 'psk_0a1b2c3d',
  createdAt: TIME,
  rotatedAt: null,
  revokedAt: null,
  ...more,
});

export const paged = <T>(items: T[], total = items.length) => ({ items, total });

export const localStatus = (more: Partial<Status> = {}): Status => ({
  backend: 'local',
  target: '/data/petstore.db',
  reachable: true,
  message: null,
  localApi: { enabled: true, address: 'http://127.0.0.1:8787', error: null },
  remoteKeyStorage: null,
  ...more,
});

export const settingsView = (more: Partial<SettingsView> = {}): SettingsView => ({
  hasRemoteKey: false,
  remoteKeyStorage: 'keyring',
  keyringError: null,
  backend: 'local',
  baseUrl: null,
  localApi: { enabled: true, port: 8787 },
  ...more,
});

export const shopSettings = (more: Partial<ShopSettings> = {}): ShopSettings => ({
  shopName: 'Petstore',
  currency: 'EUR',
  timeZone: 'Europe/Berlin',
  lowStockBelow: 5,
  ...more,
});

export const salesDay = (date: string, orders: number, units: number, revenue: string): SalesDay => ({
  date,
  orders,
  units,
  revenue,
});

export const staffMember = (id: number, name: string, role: Role, more: Partial<StaffMember> = {}): StaffMember => ({
  id,
  name,
  role,
  active: true,
  hasPin: true,
  lockedUntil: null,
  createdAt: TIME,
  updatedAt: TIME,
  ...more,
});

export const activityEntry = (
  id: number,
  kind: ActivityKind,
  actor: Actor | null,
  subject: Subject | null,
  detail: string | null,
): ActivityEntry => ({ id, at: TIME, kind, actor, subject, detail });

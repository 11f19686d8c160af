// One typed function per Tauri command (src-tauri/src/commands). Each is a thin wrapper:
// the argument object's keys are the command's parameters in camelCase, and every failure
// is rethrown as a CommandError. Screens import from here, never `invoke` directly.
import { invoke, type InvokeArgs } from '@tauri-apps/api/core';

import type { Category } from './bindings/Category';
import type { ConnectionReport } from './bindings/ConnectionReport';
import type { ExportKind } from './bindings/ExportKind';
import type { FileChoice } from './bindings/FileChoice';
import type { ImportReport } from './bindings/ImportReport';
import type { InventoryItem } from './bindings/InventoryItem';
import type { InventoryQuery } from './bindings/InventoryQuery';
import type { IssuedKey } from './bindings/IssuedKey';
import type { KeyInfo } from './bindings/KeyInfo';
import type { NewCategory } from './bindings/NewCategory';
import type { NewOrder } from './bindings/NewOrder';
import type { NewPet } from './bindings/NewPet';
import type { Order } from './bindings/Order';
import type { OutboxEntry } from './bindings/OutboxEntry';
import type { OrderPatch } from './bindings/OrderPatch';
import type { OrderQuery } from './bindings/OrderQuery';
import type { PageQuery } from './bindings/PageQuery';
import type { Paged } from './bindings/Paged';
import type { Pet } from './bindings/Pet';
import type { PetPatch } from './bindings/PetPatch';
import type { PetQuery } from './bindings/PetQuery';
import type { PetRow } from './bindings/PetRow';
import type { SalesDay } from './bindings/SalesDay';
import type { Scope } from './bindings/Scope';
import type { SettingsInput } from './bindings/SettingsInput';
import type { SettingsView } from './bindings/SettingsView';
import type { ShopSettings } from './bindings/ShopSettings';
import type { StartupFailure } from './bindings/StartupFailure';
import type { Status } from './bindings/Status';
import type { StockEntry } from './bindings/StockEntry';
import type { UiPreferences } from './bindings/UiPreferences';
import type { SyncStatus } from './bindings/SyncStatus';
import type { UpdateOffer } from './bindings/UpdateOffer';
import type { UpdateSettings } from './bindings/UpdateSettings';
import type { ActivityEntry } from './bindings/ActivityEntry';
import type { ActivityQuery } from './bindings/ActivityQuery';
import type { NewStaffMember } from './bindings/NewStaffMember';
import type { Serving } from './bindings/Serving';
import type { StaffMember } from './bindings/StaffMember';
import type { StaffPatch } from './bindings/StaffPatch';
import type { StaffRef } from './bindings/StaffRef';
import type { TillLock } from './bindings/TillLock';
import { toCommandError, type CommandError } from './errors';

/** The largest page any list command accepts. */
export const MAX_PAGE = 100;

/**
 * What the window does when the app refuses a command for the person signed in: for
 * `permission_denied`, ask for a manager's PIN on the same screen (true once approved, and
 * the one command is tried again); for `staff_required`, show the sign-in (the till is
 * locked). Set by the staff store (staff.svelte.ts); the check itself is the app's, in Rust.
 */
export type RefusalHandler = {
  approve: (error: CommandError) => Promise<boolean>;
  locked: () => void;
};
let refusals: RefusalHandler | null = null;
export function handleRefusals(handler: RefusalHandler | null) {
  refusals = handler;
}
// The sign-in's own commands: a refusal of these is an answer, not something to approve.
const NOT_APPROVED = new Set(['approve', 'sign_in', 'sign_out', 'current_staff', 'list_staff']);

// The one place a failure becomes a CommandError: past here, every rejection of a call
// already has that shape (errors.ts, asCommandError).
async function call<T>(command: string, args?: InvokeArgs): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    const error = toCommandError(e);
    if (refusals && !NOT_APPROVED.has(command)) {
      if (error.code === 'staff_required') refusals.locked();
      // Tried once more with the approval; a second refusal (the manager's role does not
      // hold it either) is the answer.
      if (error.code === 'permission_denied' && (await refusals.approve(error))) {
        try {
          return await invoke<T>(command, args);
        } catch (again) {
          throw toCommandError(again);
        }
      }
    }
    throw error;
  }
}

// The query types list every field; these fill the ones a caller leaves out, so the
// command always receives the full, explicit shape.
export function petQuery(q: Partial<PetQuery> = {}): PetQuery {
  return { statuses: [], categoryId: null, q: null, ids: [], sort: null, limit: null, offset: null, ...q };
}

export function orderQuery(q: Partial<OrderQuery> = {}): OrderQuery {
  return { petId: null, complete: null, limit: null, offset: null, ...q };
}

export function inventoryQuery(q: Partial<InventoryQuery> = {}): InventoryQuery {
  return { statuses: [], belowQuantity: null, limit: null, offset: null, ...q };
}

// Pets

export const listPets = (query: Partial<PetQuery> = {}) =>
  call<Paged<Pet>>('list_pets', { query: petQuery(query) });
/** The Pets screen's rows: `listPets` with each pet's stock, in one call. */
export const listPetRows = (query: Partial<PetQuery> = {}) =>
  call<Paged<PetRow>>('list_pet_rows', { query: petQuery(query) });
export const createPet = (pet: NewPet) => call<Pet>('create_pet', { pet });
export const getPet = (id: number) => call<Pet>('get_pet', { id });
export const replacePet = (id: number, pet: NewPet) => call<Pet>('replace_pet', { id, pet });
export const updatePet = (id: number, patch: PetPatch) => call<Pet>('update_pet', { id, patch });
export const deletePet = (id: number) => call<null>('delete_pet', { id });

/** The pets with these ids (at most one page of them), e.g. to name the pets of orders. */
export async function petsByIds(ids: number[]): Promise<Map<number, Pet>> {
  const unique = [...new Set(ids)].slice(0, MAX_PAGE);
  if (unique.length === 0) return new Map();
  const page = await listPets({ ids: unique, limit: MAX_PAGE });
  return new Map(page.items.map((p) => [p.id, p]));
}

// Categories

export const listCategories = (page: PageQuery | null = null) =>
  call<Paged<Category>>('list_categories', { page });
export const createCategory = (category: NewCategory) => call<Category>('create_category', { category });
export const replaceCategory = (id: number, category: NewCategory) =>
  call<Category>('replace_category', { id, category });
export const deleteCategory = (id: number) => call<null>('delete_category', { id });

/** Every category, a page of 100 at a time: the sidebar and the pet form need them all. */
export async function listAllCategories(): Promise<Category[]> {
  const all: Category[] = [];
  for (;;) {
    const page = await listCategories({ limit: MAX_PAGE, offset: all.length });
    all.push(...page.items);
    if (page.items.length === 0 || all.length >= page.total) return all;
  }
}

// Orders

export const listOrders = (query: Partial<OrderQuery> = {}) =>
  call<Paged<Order>>('list_orders', { query: orderQuery(query) });
export const placeOrder = (order: NewOrder) => call<Order>('place_order', { order });
export const updateOrder = (id: number, patch: OrderPatch) => call<Order>('update_order', { id, patch });
export const completeOrder = (id: number) => updateOrder(id, { complete: true });
/** The undo of completing: the order is open again, its units still reserved. */
export const reopenOrder = (id: number) => updateOrder(id, { complete: false });
export const cancelOrder = (id: number) => call<null>('cancel_order', { id });

// Inventory

export const listInventory = (query: Partial<InventoryQuery> = {}) =>
  call<Paged<InventoryItem>>('list_inventory', { query: inventoryQuery(query) });
export const getInventory = (petId: number) => call<InventoryItem>('get_inventory', { petId });
export const setInventory = (petId: number, quantity: number, reason?: string) =>
  call<InventoryItem>('set_inventory', { petId, update: reason ? { quantity, reason } : { quantity } });
export const adjustInventory = (petId: number, delta: number, reason: string) =>
  call<InventoryItem>('adjust_inventory', { petId, adjustment: { delta, reason } });
/** Everything that moved the pet's stock, newest first, each with the stock after it. */
export const stockHistory = (petId: number, page: PageQuery | null = null) =>
  call<Paged<StockEntry>>('stock_history', { petId, page });

// Settings and status

export const getSettings = () => call<SettingsView>('get_settings', {});
export const saveSettings = (settings: SettingsInput) => call<SettingsView>('save_settings', { settings });
export const testConnection = (baseUrl: string, remoteKey: string | null) =>
  call<ConnectionReport>('test_connection', { baseUrl, remoteKey });
export const getStatus = () => call<Status>('get_status', {});
export const getLocalApiKey = () => call<string>('get_local_api_key', {});
export const regenerateLocalApiKey = () => call<string>('regenerate_local_api_key', {});
// The window's own preferences (its theme), kept in settings.json apart from the settings.
export const getPreferences = () => call<UiPreferences>('get_preferences', {});
export const savePreferences = (preferences: UiPreferences) =>
  call<UiPreferences>('save_preferences', { preferences });
/** Opens the local API's reference in the system's browser. */
export const openApiDocs = () => call<null>('open_api_docs', {});

// Backup of the local database: the file written, or where the next one could go.
export const backupDatabase = (to: string) => call<string>('backup_database', { to });
export const suggestBackupPath = () => call<string>('suggest_backup_path', {});

// Named API keys of the local API (always the local database's); a secret comes back only
// from create and rotate.
export const listApiKeys = () => call<KeyInfo[]>('list_api_keys', {});
export const createApiKey = (name: string, scope: Scope) => call<IssuedKey>('create_api_key', { name, scope });
export const revokeApiKey = (name: string) => call<KeyInfo>('revoke_api_key', { name });
export const rotateApiKey = (name: string) => call<IssuedKey>('rotate_api_key', { name });

// Remote mode's sync with the server and its outbox of writes taken offline. The status is
// null in local mode, and the outbox empty.
export const getSyncStatus = () => call<SyncStatus | null>('get_sync_status', {});
export const listOutbox = () => call<OutboxEntry[]>('list_outbox', {});
export const retryOutboxEntry = (seq: number) => call<null>('retry_outbox_entry', { seq });
export const dropOutboxEntry = (seq: number) => call<null>('drop_outbox_entry', { seq });
export const quitApp = () => call<null>('quit_app', {});

// The failure screen's (src-tauri/src/commands/startup.rs).
export const startupFailure = () => call<StartupFailure | null>('startup_failure', {});
export const openDataFolder = () => call<null>('open_data_folder', {});
export const restartApp = () => call<null>('restart_app', {});
export const chooseBackup = () => call<string | null>('choose_backup', {});
export const restoreBackup = (path: string) => call<string>('restore_backup', { path });

// Updates (src-tauri/src/commands/updates.rs): off until an address is saved.
export const getUpdateSettings = () => call<UpdateSettings>('get_update_settings', {});
export const saveUpdateAddress = (address: string | null) => call<UpdateSettings>('save_update_address', { address });
export const checkForUpdate = () => call<UpdateOffer | null>('check_for_update', {});
export const installUpdate = () => call<null>('install_update', {});
export const keepAppOpen = () => call<null>('keep_app_open', {});

// The counter: the shop's settings (name on receipts, currency, time zone, low-stock level),
// the sales report (days as YYYY-MM-DD, at most 366), and CSV files in and out. A path comes
// from `chooseFile` (the system's dialog; null when cancelled).
export const getShopSettings = () => call<ShopSettings>('get_shop_settings', {});
export const saveShopSettings = (settings: ShopSettings) => call<ShopSettings>('save_shop_settings', { settings });
export const salesReport = (from: string, to: string) => call<SalesDay[]>('sales_report', { from, to });
export const chooseFile = (choice: FileChoice) => call<string | null>('choose_file', { choice });
/** Writes the export to `path`; the bytes written. `from`/`to` limit orders to those days. */
export const exportCsv = (kind: ExportKind, path: string, from: string | null = null, to: string | null = null) =>
  call<number>('export_csv', { kind, path, from, to });
export const importPetsCsv = (path: string, createCategories: boolean, dryRun: boolean) =>
  call<ImportReport>('import_pets_csv', { path, createCategories, dryRun });

// Staff at the till (src-tauri/src/commands/staff.rs): who is serving, the sign-in and the
// lock, a manager's approval, managing staff (owners), the activity log.
export const currentStaff = () => call<Serving>('current_staff', {});
export const listStaff = () => call<StaffMember[]>('list_staff', {});
export const signIn = (staffId: number, pin: string | null) => call<Serving>('sign_in', { staffId, pin });
export const signOut = () => call<Serving>('sign_out', {});
export const approve = (staffId: number, pin: string) => call<StaffRef>('approve', { staffId, pin });
export const createStaff = (member: NewStaffMember) => call<StaffMember>('create_staff', { member });
export const updateStaff = (staffId: number, patch: StaffPatch) =>
  call<StaffMember>('update_staff', { staffId, patch });
export const listActivity = (query: ActivityQuery) => call<Paged<ActivityEntry>>('list_activity', { query });
export const exportActivityCsv = (query: ActivityQuery, path: string) =>
  call<number>('export_activity_csv', { query, path });
export const getTillLock = () => call<TillLock>('get_till_lock', {});
export const saveTillLock = (lock: TillLock) => call<TillLock>('save_till_lock', { lock });

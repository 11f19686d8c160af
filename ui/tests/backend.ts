// A recording stand-in for the app's commands: each test gives the answers it needs and
// then checks which commands were called with which arguments.
import { mockIPC } from '@tauri-apps/api/mocks';

import type { Category } from '../src/lib/bindings/Category';
import type { CommandError } from '../src/lib/bindings/CommandError';
import type { InventoryItem } from '../src/lib/bindings/InventoryItem';
import type { Order } from '../src/lib/bindings/Order';
import type { Pet } from '../src/lib/bindings/Pet';
import type { Status } from '../src/lib/bindings/Status';

export type Args = Record<string, any>;
export type Handler = (args: Args) => unknown;

export function mockBackend(handlers: Record<string, Handler>) {
  const calls: { cmd: string; args: Args }[] = [];
  mockIPC(
    (cmd, args) => {
      calls.push({ cmd, args: (args ?? {}) as Args });
      const handler = handlers[cmd];
      if (!handler) throw `command ${cmd} not mocked`;
      return handler((args ?? {}) as Args);
    },
    { shouldMockEvents: true },
  );
  return {
    calls,
    /** The argument objects of every call of `cmd`, in order. */
    argsOf: (cmd: string) => calls.filter((c) => c.cmd === cmd).map((c) => c.args),
    countOf: (cmd: string) => calls.filter((c) => c.cmd === cmd).length,
  };
}

/** A handler that fails the way a command does: rejecting with the error object. */
export const reject = (code: CommandError['code'], message: string, status = 409) => () => {
  throw { code, message, status } satisfies CommandError;
};

const T = '2026-11-22T10:15:00Z';

export const pet = (id: number, name: string, more: Partial<Pet> = {}): Pet => ({
  id,
  name,
  categoryId: 1,
  status: 'available',
  description: null,
  createdAt: T,
  updatedAt: T,
  ...more,
});

export const category = (id: number, name: string, petCount = 0): Category => ({
  id,
  name,
  description: null,
  petCount,
  createdAt: T,
});

export const order = (id: number, petId: number, more: Partial<Order> = {}): Order => ({
  id,
  petId,
  quantity: 1,
  shipDate: null,
  complete: false,
  createdAt: T,
  ...more,
});

export const stockItem = (petId: number, petName: string, quantity: number, more: Partial<InventoryItem> = {}) =>
  ({ petId, petName, status: 'available', quantity, updatedAt: T, ...more }) satisfies InventoryItem;

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

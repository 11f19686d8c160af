import type { CommandError } from './bindings/CommandError';
import type { ErrorCode } from './bindings/ErrorCode';

export type { CommandError };

/** True for the `{code, message, status}` object every failed command rejects with. */
export function isCommandError(value: unknown): value is CommandError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.message === 'string' && typeof v.status === 'number';
}

/**
 * Turns whatever a failed command call threw into a CommandError. Commands reject with the
 * object itself; Tauri rejects with a plain string when the call never reached the command
 * (bad arguments, missing permission). Applied once, where the call returns (api.ts), so
 * everything past it already has this shape.
 */
export function toCommandError(value: unknown): CommandError {
  if (isCommandError(value)) return value;
  const message =
    typeof value === 'string' ? value : value instanceof Error ? value.message : 'Something went wrong.';
  return { code: 'internal', message: message || 'Something went wrong.', status: 500 };
}

/**
 * What a call through api.ts rejected with, typed. Anything that is not a CommandError did
 * not come from a command but from a bug in this window: it is thrown on, to the console,
 * rather than shown to staff as if the app had said it.
 */
export function asCommandError(value: unknown): CommandError {
  if (isCommandError(value)) return value;
  throw value;
}

/**
 * What staff can do about a refusal of the business rules (docs/ARCHITECTURE.md, "Pet status
 * and stock rules") or a remote that cannot be used. Every code, and where it comes from:
 * docs/ARCHITECTURE.md, "Error codes".
 */
const HINTS: Partial<Record<ErrorCode, string>> = {
  insufficient_stock: 'Not enough in stock for that: add stock first, or take fewer.',
  pet_not_available: 'Only available pets can be ordered.',
  order_completed: 'A completed order can no longer be changed or cancelled.',
  order_cancelled: 'A cancelled order is kept for the record and can no longer change.',
  category_in_use: 'Move its pets to another category, or delete them, first.',
  pet_has_orders: 'A pet with orders is kept for their record and cannot be deleted.',
  duplicate_name: 'Names must be unique (upper and lower case count as the same).',
  unreachable: 'Check the server address in Settings, and that the server is running.',
  unauthorized: 'Check the API key in Settings.',
  timeout: 'The server took too long to answer. Try again.',
  request_timeout: 'The server took too long to answer; the message says whether anything was changed. Check before trying again.',
  busy: 'Another program (a backup, a second Petstore) is using the database. Nothing was changed: try again in a moment.',
};

export function hintFor(error: CommandError): string | null {
  return HINTS[error.code] ?? null;
}

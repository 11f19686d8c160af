import type { CommandError } from './bindings/CommandError';
import type { ErrorCode } from './bindings/ErrorCode';
import { t } from './i18n.svelte';

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
  const message = typeof value === 'string' ? value : value instanceof Error ? value.message : '';
  return { code: 'internal', message: message || t('errors.unknown'), status: 500 };
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
const HINTED = [
  'insufficient_stock',
  'pet_not_available',
  'order_completed',
  'order_cancelled',
  'category_in_use',
  'pet_has_orders',
  'duplicate_name',
  'unreachable',
  'unauthorized',
  'timeout',
  'request_timeout',
  'busy',
] as const satisfies readonly ErrorCode[];

type Hinted = (typeof HINTED)[number];

const isHinted = (code: ErrorCode): code is Hinted => (HINTED as readonly ErrorCode[]).includes(code);

/** The hint in the language shown (errors.hints in src/locales), read when it is shown. */
export function hintFor(error: CommandError): string | null {
  return isHinted(error.code) ? t(`errors.hints.${error.code}`) : null;
}

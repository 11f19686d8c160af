// A stand-in for the app's commands, answering from handlers: each UI test gives the
// answers it needs and then checks which commands were called with which arguments, and
// mock mode (fakeBackend.ts) gives answers from the fixtures. It holds no business rule:
// the rules live in the Rust store, once, and the contract suite checks them there.
import { mockIPC } from '@tauri-apps/api/mocks';

import type { CommandError } from '../lib/bindings/CommandError';

// The arguments as the command receives them; a handler reads what it needs.
export type Args = Record<string, any>;
export type Handler = (args: Args) => unknown;

export function mockBackend(handlers: Record<string, Handler>, options: { latencyMs?: number } = {}) {
  const calls: { cmd: string; args: Args }[] = [];
  const answer = (cmd: string, args: Args) => {
    calls.push({ cmd, args });
    const handler = handlers[cmd];
    if (!handler) throw `command ${cmd} not mocked`;
    return handler(args);
  };
  mockIPC(
    (cmd, args) => {
      const a = (args ?? {}) as Args;
      if (!options.latencyMs) return answer(cmd, a);
      return new Promise((resolve) => setTimeout(resolve, options.latencyMs)).then(() => answer(cmd, a));
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

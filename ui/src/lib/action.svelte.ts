// Something a button does through the app's commands: while it runs its button shows it
// and a second press is ignored; when it fails, its error is there for an Alert.
import { asCommandError, type CommandError } from './errors';

export class Action<T = void> {
  busy = $state(false);
  /** What the run in progress was given, to show which row or which button is busy. */
  busyWith = $state.raw<T | null>(null);
  /** The last failure. A string is a check made here before running, set by the caller. */
  error = $state.raw<CommandError | string | null>(null);
  #work: (input: T) => Promise<unknown>;

  constructor(work: (input: T) => Promise<unknown>) {
    this.#work = work;
  }

  /** Runs the work unless it is running already; resolves when it is done, failed or not. */
  async run(input: T): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.busyWith = input;
    this.error = null;
    try {
      await this.#work(input);
    } catch (e) {
      this.error = asCommandError(e);
    } finally {
      this.busy = false;
      this.busyWith = null;
    }
  }
}

/** E.g. `const save = action(async (pet: NewPet) => ...)`, then `save.run(pet)`, `save.busy`, `save.error`. */
export function action<T = void>(work: (input: T) => Promise<unknown>): Action<T> {
  return new Action(work);
}

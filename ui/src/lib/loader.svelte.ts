// A list or record a screen shows: the data, the error of the last load, and whether a
// load is running. Answers that arrive after a newer load started are dropped, so quick
// filter changes never show stale rows. Old data stays on screen while reloading, so a
// refresh after a change event does not flash "Loading…".
import { untrack } from 'svelte';

import { asCommandError, type CommandError } from './errors';

export class Loader<Q, T> {
  data = $state.raw<T | null>(null);
  error = $state.raw<CommandError | null>(null);
  loading = $state(false);
  #fetch: (query: Q) => Promise<T>;
  #seq = 0;
  #last: { query: Q } | null = null;

  constructor(fetch: (query: Q) => Promise<T>) {
    this.#fetch = fetch;
  }

  /** Loads for `query`. Safe to call from an `$effect`: it tracks nothing itself. */
  load(query: Q): Promise<void> {
    this.#last = { query };
    return untrack(() => this.#run(query));
  }

  /** Loads again with the last query (after a change event or an action). */
  reload(): Promise<void> {
    return this.#last ? untrack(() => this.#run(this.#last!.query)) : Promise.resolve();
  }

  /** The query of the last load, if any. */
  get query(): Q | undefined {
    return this.#last?.query;
  }

  /** A mark of the last load started: `replace` with it applies only if none started since. */
  get mark(): number {
    return this.#seq;
  }

  /**
   * Puts `data` in place of what is shown (rows read again after a change), unless a load
   * started since `mark` or runs now: its answer is as new, and would overwrite it anyway.
   */
  replace(mark: number, data: T): boolean {
    if (mark !== this.#seq || this.loading) return false;
    this.data = data;
    return true;
  }

  async #run(query: Q): Promise<void> {
    const seq = ++this.#seq;
    this.loading = true;
    try {
      const data = await this.#fetch(query);
      if (seq === this.#seq) {
        this.data = data;
        this.error = null;
      }
    } catch (e) {
      if (seq === this.#seq) this.error = asCommandError(e);
    } finally {
      if (seq === this.#seq) this.loading = false;
    }
  }
}

// What the status bar shows: the backend, whether it answers, and the local API. Polled,
// because reachability changes without any event (a server goes down, a cable comes out).
import { getStatus } from './api';
import type { Status } from './bindings/Status';
import { asCommandError, type CommandError } from './errors';

export const STATUS_POLL_MS = 10_000;

class StatusStore {
  current = $state.raw<Status | null>(null);
  error = $state.raw<CommandError | null>(null);
  #seq = 0;

  async refresh(): Promise<void> {
    // A slow answer must not overwrite a newer one (e.g. right after saving settings).
    const seq = ++this.#seq;
    try {
      const s = await getStatus();
      if (seq === this.#seq) {
        this.current = s;
        this.error = null;
      }
    } catch (e) {
      if (seq === this.#seq) this.error = asCommandError(e);
    }
  }

  /** Refreshes now and every `intervalMs`; returns the function that stops it. */
  start(intervalMs = STATUS_POLL_MS): () => void {
    void this.refresh();
    const timer = setInterval(() => void this.refresh(), intervalMs);
    return () => clearInterval(timer);
  }
}

export const status = new StatusStore();

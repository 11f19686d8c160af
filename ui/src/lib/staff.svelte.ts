// Who is serving at this till, as the window shows it: the app keeps the signed-in person
// in its Rust state and checks every write there; this store only mirrors it, shows the
// sign-in when the till is locked, locks it after the idle time, and asks for a manager's
// PIN when the app refuses an action (api.ts retries that one action once approved).
import { listen } from '@tauri-apps/api/event';

import { approve, currentStaff, getTillLock, handleRefusals, signIn, signOut } from './api';
import type { Serving } from './bindings/Serving';
import type { SyncStatus } from './bindings/SyncStatus';
import type { CommandError } from './errors';
import { SYNC_EVENT } from './sync.svelte';

/** What a person's activity at the till is: any of these keeps it from locking. */
const ACTIVITY_EVENTS = ['pointerdown', 'keydown', 'wheel', 'touchstart'] as const;

export type OverrideRequest = { error: CommandError; answer: (approved: boolean) => void };

class StaffStore {
  serving = $state.raw<Serving | null>(null);
  /** The sign-in is open to switch people while someone is signed in (Escape goes back). */
  switching = $state(false);
  /** Minutes idle before the till locks; 0 never. */
  idleMinutes = $state(5);
  /** A refused action waiting for a manager's PIN. */
  override = $state.raw<OverrideRequest | null>(null);
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** The till asks who is serving: the shop (its own, or the server's it follows) has more
   *  than its PIN-less owner, and the staff are known here. */
  get signInUsed(): boolean {
    return this.serving !== null && !this.serving.alone;
  }

  get locked(): boolean {
    return this.signInUsed && this.serving?.staff === null;
  }

  get signInOpen(): boolean {
    return this.locked || (this.switching && this.signInUsed);
  }

  async refresh(): Promise<void> {
    this.serving = await currentStaff();
    this.#wait();
  }

  async signIn(staffId: number, pin: string | null): Promise<void> {
    this.serving = await signIn(staffId, pin);
    this.switching = false;
    this.#wait();
  }

  async lock(): Promise<void> {
    clearTimeout(this.#timer);
    this.switching = false;
    this.serving = await signOut();
  }

  /** A manager's PIN for the refused action: resolves once approved, or false if cancelled. */
  approve(error: CommandError): Promise<boolean> {
    if (!this.signInUsed) return Promise.resolve(false);
    this.override?.answer(false);
    return new Promise((resolve) => {
      this.override = {
        error,
        answer: (approved) => {
          this.override = null;
          resolve(approved);
        },
      };
    });
  }

  async approveWith(staffId: number, pin: string): Promise<void> {
    await approve(staffId, pin);
    this.override?.answer(true);
  }

  /** Reads who is serving and the idle time, and watches for idleness; returns the stop. */
  start(): () => void {
    handleRefusals({ approve: (e) => this.approve(e), locked: () => void this.refresh() });
    void this.refresh().catch((e) => console.warn('Who is serving could not be read:', e));
    void getTillLock()
      .then((lock) => this.setIdleMinutes(lock.idleMinutes))
      .catch((e) => console.warn('The idle lock could not be read:', e));
    const active = () => this.#wait();
    for (const event of ACTIVITY_EVENTS) window.addEventListener(event, active, { passive: true, capture: true });
    // A till that follows a server learns the server's staff as it syncs: who is serving is
    // read again each time it is in step with the server (after a start, an outage, a
    // switch), so the sign-in shows as soon as the staff are known.
    let stopped = false;
    let unlisten: (() => void) | undefined;
    let was: string | undefined;
    listen<SyncStatus | null>(SYNC_EVENT, (event) => {
      const now = event.payload?.state;
      if (now === 'synced' && was !== 'synced') void this.refresh().catch(() => {});
      was = now;
    })
      .then((u) => (stopped ? u() : (unlisten = u)))
      .catch((e) => console.warn('Not listening to sync changes:', e));
    return () => {
      stopped = true;
      unlisten?.();
      handleRefusals(null);
      clearTimeout(this.#timer);
      for (const event of ACTIVITY_EVENTS) window.removeEventListener(event, active, { capture: true });
    };
  }

  setIdleMinutes(minutes: number) {
    this.idleMinutes = minutes;
    this.#wait();
  }

  // The till locks after `idleMinutes` without a touch or a key, while someone is signed in
  // and there is someone else who could sign in.
  #wait() {
    clearTimeout(this.#timer);
    if (this.idleMinutes <= 0 || !this.signInUsed || this.serving?.staff === null) return;
    this.#timer = setTimeout(() => void this.lock(), this.idleMinutes * 60_000);
  }
}

export const staff = new StaffStore();

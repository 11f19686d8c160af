// The one short success message ("Order #12 placed"). A new message replaces the old one;
// it goes away by itself so the counter never fills up with notices. It may carry one
// action ("Undo"), a real button: it stays longer then, and while the pointer or the focus
// is on it, so that it can be reached with the mouse or with Tab.

export const TOAST_MS = 4000;
/** How long a message with an action stays, from when it shows or is left. */
export const TOAST_ACTION_MS = 10000;

export type ToastAction = { label: string; run: () => unknown };

class Toast {
  message = $state<string | null>(null);
  action = $state.raw<ToastAction | null>(null);
  #timer: ReturnType<typeof setTimeout> | undefined;

  show(message: string, action: ToastAction | null = null) {
    this.message = message;
    this.action = action;
    this.#wait();
  }

  /** The pointer or the focus is on the message: it stays until they leave. */
  hold() {
    clearTimeout(this.#timer);
  }

  release() {
    if (this.message) this.#wait();
  }

  /** Runs the action once; the message goes, whatever the action then says. */
  act() {
    const action = this.action;
    this.dismiss();
    return action?.run();
  }

  dismiss() {
    clearTimeout(this.#timer);
    this.message = null;
    this.action = null;
  }

  #wait() {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.dismiss(), this.action ? TOAST_ACTION_MS : TOAST_MS);
  }
}

export const toast = new Toast();

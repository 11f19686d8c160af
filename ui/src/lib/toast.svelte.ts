// The one short success message ("Order #12 placed"). A new message replaces the old one;
// it goes away by itself so the counter never fills up with notices.

export const TOAST_MS = 4000;

class Toast {
  message = $state<string | null>(null);
  #timer: ReturnType<typeof setTimeout> | undefined;

  show(message: string) {
    clearTimeout(this.#timer);
    this.message = message;
    this.#timer = setTimeout(() => this.dismiss(), TOAST_MS);
  }

  dismiss() {
    clearTimeout(this.#timer);
    this.message = null;
  }
}

export const toast = new Toast();

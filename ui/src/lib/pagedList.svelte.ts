// A screen's paged list: its filters, the page showing, the data of that page, and the
// refresh after any change. Create it while the component initializes: it starts loading
// at once, follows its filters, and stops listening when the component goes.
import { ALL_CHANGES, onChange } from './changes';
import { Loader } from './loader.svelte';

export const PAGE_SIZE = 25;

/** Where the last page of `total` rows starts, `limit` to a page. */
export function lastPageOffset(total: number, limit: number): number {
  return total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
}

type Page = { items: readonly unknown[]; total: number };

export class PagedList<F, P extends Page> {
  #loader: Loader<{ filters: F; offset: number }, P>;
  /** The first row of the page showing. New filters start again at the first page. */
  offset: number;

  constructor(options: {
    /** The filters; reading them tracks them, so a change loads again. */
    filters: () => F;
    /** One page for these filters; the answer may carry more than the rows (e.g. names). */
    fetch: (filters: F, page: { limit: number; offset: number }) => Promise<P>;
  }) {
    this.#loader = new Loader(({ filters, offset }) => options.fetch(filters, { limit: PAGE_SIZE, offset }));
    const filters = $derived(options.filters());
    // Compared by value: setting a filter to what it was already keeps the page.
    const key = $derived(JSON.stringify(filters));
    // Back to 0 whenever the filters change; the Pager sets it in between.
    this.offset = $derived.by(() => {
      void key;
      return 0;
    });

    $effect(() => {
      void this.#loader.load({ filters, offset: this.offset });
    });

    // After a delete empties the last page, step back to the page that is last now.
    $effect(() => {
      const page = this.page;
      if (page && page.items.length === 0 && this.offset > 0 && page.total > 0) {
        this.offset = lastPageOffset(page.total, PAGE_SIZE);
      }
    });

    // Any change can touch any list: an order moves a pet's status, a pet a category's count.
    $effect(() => onChange(ALL_CHANGES, () => void this.reload()));
  }

  /** The page showing (old data stays while the next loads), null before the first answer. */
  get page(): P | null {
    return this.#loader.data;
  }

  get error() {
    return this.#loader.error;
  }

  get loading() {
    return this.#loader.loading;
  }

  /** What the Pager needs, or null while there is nothing to page through. */
  get pager() {
    const page = this.page;
    if (!page || page.total === 0) return null;
    return {
      offset: this.offset,
      limit: PAGE_SIZE,
      count: page.items.length,
      total: page.total,
      onpage: (offset: number) => (this.offset = offset),
    };
  }

  /** Loads the page showing again, e.g. after an action changed it. */
  reload(): Promise<void> {
    return this.#loader.reload();
  }
}

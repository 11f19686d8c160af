// A screen's paged list: its filters, the page showing, the data of that page, and its
// update after a change. Create it while the component initializes: it starts loading at
// once, follows its filters, and stops listening when the component goes.
//
// After a change event a list reads again only the rows of its page that changed, when it
// is told how (`rows`): one call for them, rather than the page. It reloads the page when
// the change may change which rows it holds or in which order (a row made, deleted, out of
// the filter, or moved by its sort), and on a reset.
import type { Change } from './bindings/Change';
import { ALL_CHANGES, onChange, type Changed } from './changes';
import { Loader } from './loader.svelte';

export const PAGE_SIZE = 25;

/** Where the last page of `total` rows starts, `limit` to a page. */
export function lastPageOffset(total: number, limit: number): number {
  return total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
}

type Page = { items: readonly unknown[]; total: number };
type Item<P extends Page> = P['items'][number];

/** How a list updates changed rows in place. */
export type RowUpdates<F, R> = {
  /** The id a change names a row by. */
  id: (row: R) => number;
  /**
   * The ids of the page's rows (`onPage`) to read again after `changed`, or 'reload' when
   * it may change which rows the page holds.
   */
  changed: (changed: Changed, onPage: ReadonlySet<number>, filters: F) => number[] | 'reload';
  /** These rows as the page's filters give them; a row left out no longer fits the page. */
  fetch: (filters: F, ids: number[]) => Promise<R[]>;
  /** Whether a row read again keeps its place (its sort key did not change); default yes. */
  stays?: (before: R, after: R, filters: F) => boolean;
};

export class PagedList<F, P extends Page> {
  #loader: Loader<{ filters: F; offset: number }, P>;
  /** The first row of the page showing. New filters start again at the first page. */
  offset: number;

  constructor(options: {
    /** The filters; reading them tracks them, so a change loads again. */
    filters: () => F;
    /** One page for these filters; the answer may carry more than the rows (e.g. names). */
    fetch: (filters: F, page: { limit: number; offset: number }) => Promise<P>;
    /** The kinds of change that concern the list (default: every kind of the shop's data). */
    kinds?: readonly Change[];
    /** Whether a change of those kinds concerns the page showing (default: yes). */
    concerns?: (changed: Changed, page: P) => boolean;
    /** Read changed rows again instead of the page. */
    rows?: RowUpdates<F, Item<P>>;
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

    // One update after another, so an older answer for a row never lands after a newer one.
    $effect(() =>
      onChange(options.kinds ?? ALL_CHANGES, (changed) => {
        this.#updates = this.#updates.then(() => this.#changed(changed, options));
      }),
    );
  }

  #updates: Promise<void> = Promise.resolve();

  async #changed(changed: Changed, options: { concerns?: (c: Changed, page: P) => boolean; rows?: RowUpdates<F, Item<P>> }) {
    const page = this.page;
    const query = this.#loader.query;
    if (changed.reset) return this.reload();
    if (page && options.concerns && !options.concerns(changed, page)) return;
    // A load running now may have started before the change: the page again, after it.
    if (!page || !query || this.loading) return this.reload();
    const rows = options.rows;
    if (!rows) return this.reload();
    const onPage = new Set(page.items.map((r) => rows.id(r)));
    const ids = rows.changed(changed, onPage, query.filters);
    if (ids === 'reload') return this.reload();
    if (ids.length === 0) return;
    const mark = this.#loader.mark;
    let fresh: Item<P>[];
    try {
      fresh = await rows.fetch(query.filters, ids);
    } catch {
      // The page says what went wrong.
      return this.reload();
    }
    const byId = new Map(fresh.map((r) => [rows.id(r), r]));
    // The page as it is now: this window's own write may have changed a row meanwhile.
    const now = this.page ?? page;
    const moved = now.items.some((r) => {
      const after = byId.get(rows.id(r));
      return after !== undefined && rows.stays !== undefined && !rows.stays(r, after, query.filters);
    });
    if (ids.some((id) => !byId.has(id)) || moved) return this.reload();
    const items = now.items.map((r) => byId.get(rows.id(r)) ?? r);
    this.#loader.replace(mark, { ...now, items } as P);
  }

  /** Changes a row of the page showing as `update` says (the answer of this window's own write). */
  patch(id: (row: Item<P>) => boolean, update: (row: Item<P>) => Item<P>): void {
    const page = this.page;
    if (!page) return;
    this.#loader.replace(this.#loader.mark, { ...page, items: page.items.map((r) => (id(r) ? update(r) : r)) } as P);
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

// The Pets screen at a million pets (a shop's catalogue may be that large): how long the real app takes, from a person's
// click or last keystroke to the table showing the new rows, for paging (next, last, first),
// a category, a status filter, a search and clearing it; and its first screen and memory.
//
// Timing happens inside the webview, on its performance.now() clock: a capturing listener
// notes when the click or the last `input` event reached the page, a MutationObserver when
// the table holds different rows (or a different total) and is no longer busy, and an
// animation frame after that when those rows were painted. A wrapper around the IPC's fetch
// notes when the table's list_pet_rows call left and came back, which splits each figure into
// the UI's part (debounce included) and the backend's (IPC + store). WebDriver round trips
// are outside every figure.
//
// The figures are the point: they are printed as key=value lines (median and max of
// SCALE_REPEAT runs) and written to SCALE_OUT. The assertions check only what cannot flake:
// the data shown is right, and each action ends within a generous bound.
//
// Environment (tests/e2e/bench.sh sets these for the release build):
//   SCALE_DB        a database to copy into the app's data directory instead of seeding
//   SCALE_PETS      pets to seed when SCALE_DB is not given (default 1,000,000)
//   SCALE_REPEAT    runs of each action (default 3)
//   SCALE_LAUNCHES  cold starts timed for each first-screen figure (default 1)
//   SCALE_OUT       the key=value file (default target/e2e/scale.txt)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  ARTIFACTS,
  appMemory,
  byTestId,
  launchApp,
  localApiKey,
  median,
  nowMsSinceBoot,
  restClient,
  screenshot,
  seedDatabase,
  sel,
  startedAtMsSinceBoot,
  tempDir,
  until,
  waitForText,
  writeFigures,
} from './helpers.js';

const PETS = Number(process.env.SCALE_PETS ?? 1_000_000);
const SOURCE_DB = process.env.SCALE_DB ? path.resolve(process.env.SCALE_DB) : null;
const REPEAT = Number(process.env.SCALE_REPEAT ?? 3);
const LAUNCHES = Number(process.env.SCALE_LAUNCHES ?? 1);
const OUT = path.resolve(process.env.SCALE_OUT ?? path.join(ARTIFACTS, 'scale.txt'));

/** The page size and search debounce of PetsScreen.svelte. */
const PAGE = 25;
const DEBOUNCE_MS = 250;
/** No action may take longer than this: a sanity bound, not a target. */
const ACTION_BOUND_MS = 10_000;
/** Terms typed into the search box, one per run; each names some of the seed's pets. */
const SEARCHES = ['Mochi', 'Pickles', 'Ziggy', 'Biscuit', 'Willow'];

const fmt = (n) => new Intl.NumberFormat('en-US').format(n);

/** Whether some part of `text` is `term` with at most one character missing, extra or
 * different: what the search box's loose search finds in a name (`GET /pets?search=`). */
function containsWithOneTypo(text, term) {
  const within = (a, b) => {
    if (Math.abs(a.length - b.length) > 1) return false;
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return [a.slice(i + 1) === b.slice(i + 1), a.slice(i + 1) === b.slice(i), a.slice(i) === b.slice(i + 1)].some(Boolean);
  };
  for (let start = 0; start < text.length; start++) {
    for (const len of [term.length - 1, term.length, term.length + 1]) {
      if (len > 0 && start + len <= text.length && within(text.slice(start, start + len), term)) return true;
    }
  }
  return false;
}
const ROWS = '[data-testid^="pet-row-"]';

// Figures shared by the two tests, written once at the end.
const figures = new Map();
const record = (key, value) => figures.set(key, value);

// ---------------------------------------------------------------------------------------
// In the webview

// Installed once per page. `arm(kind, target)` starts one measurement; `result()` answers
// null until it is over. Only the table's own list_pet_rows call (limit 25) counts as its request.
const INSTRUMENT = `
  if (window.__scale) return true;
  const s = (window.__scale = { a: null });
  const snapshot = () => {
    const rows = [...document.querySelectorAll('${ROWS}')];
    const cell = (r, i) => (r.children[i]?.textContent ?? '').trim();
    const range = (document.querySelector('[data-testid="pager-range"]')?.textContent ?? '').trim();
    const wrap = document.querySelector('.table-wrap[aria-busy]');
    return {
      ids: rows.map((r) => Number(r.getAttribute('data-testid').slice(8))),
      names: rows.map((r) => (r.querySelector('.pet-name')?.textContent ?? '').trim()),
      categories: rows.map((r) => cell(r, 2)),
      statuses: rows.map((r) => cell(r, 3)),
      range,
      total: /of\\s+([\\d,]+)$/.exec(range)?.[1] ?? (document.querySelector('[data-testid="empty-state"]') ? '0' : ''),
      busy: !wrap || wrap.getAttribute('aria-busy') === 'true',
    };
  };
  s.snapshot = snapshot;
  const check = () => {
    const a = s.a;
    if (!a || a.doneAt !== null || a.eventAt === null) return;
    const now = performance.now();
    const snap = snapshot();
    if (snap.busy) return;
    // New rows or a new total: the range's "from–to" moves with the click, before the data.
    if (snap.ids.join() === a.before.ids.join() && snap.total === a.before.total) return;
    // Typing: only the answer to the last keystroke counts, which cannot come before the
    // debounce has run out (older answers are dropped once the last request is sent).
    if (a.kind === 'input' && (a.value !== a.target || now - a.eventAt < ${DEBOUNCE_MS})) return;
    a.doneAt = now;
    a.snapshot = snap;
    // The frame that shows the rows: its animation frame runs before it is painted, and a
    // task queued from there runs after.
    requestAnimationFrame(() => setTimeout(() => (a.paintedAt = performance.now()), 0));
  };
  new MutationObserver(check).observe(document.body, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    attributeFilter: ['aria-busy', 'data-testid'],
  });
  window.addEventListener('click', () => {
    const a = s.a;
    if (a && a.kind === 'click' && a.eventAt === null) a.eventAt = performance.now();
  }, true);
  window.addEventListener('input', (e) => {
    const a = s.a;
    if (a && a.kind === 'input' && a.doneAt === null) {
      a.eventAt = performance.now();
      a.value = e.target.value;
    }
  }, true);
  // Tauri's invoke cannot be replaced (a read-only property), but on Linux it sends each
  // command with fetch('ipc://localhost/<command>'), looked up when called.
  const fetch = window.fetch;
  window.fetch = function (url, init) {
    const p = fetch.call(this, url, init);
    const a = s.a;
    if (a && String(url).endsWith('/list_pet_rows')) {
      let limit = null;
      try {
        limit = JSON.parse(init.body).query.limit;
      } catch {}
      if (limit === ${PAGE}) {
        const call = { sentAt: performance.now(), answeredAt: null };
        a.calls.push(call);
        const answered = () => (call.answeredAt = performance.now());
        p.then(answered, answered);
      }
    }
    return p;
  };
  s.arm = (kind, target) => {
    s.a = { kind, target, before: snapshot(), eventAt: null, value: null, calls: [] };
    Object.assign(s.a, { doneAt: null, paintedAt: null, snapshot: null });
  };
  s.result = () => {
    const a = s.a;
    if (!a || a.doneAt === null) return null;
    // A frame that never comes (a hidden window) must not hang the test: the DOM time stands.
    const painted = a.paintedAt ?? (performance.now() - a.doneAt > 1000 ? a.doneAt : null);
    if (painted === null) return null;
    const last = a.calls.at(-1) ?? null;
    return {
      ms: painted - a.eventAt,
      domMs: a.doneAt - a.eventAt,
      painted: a.paintedAt !== null,
      requests: a.calls.length,
      // From the user's event to the request leaving (debounce included), the request, from
      // its answer to the new rows in the DOM, and from there to the painted frame.
      beforeRequestMs: last ? last.sentAt - a.eventAt : null,
      requestMs: last && last.answeredAt !== null ? last.answeredAt - last.sentAt : null,
      domMsAfterAnswer: last && last.answeredAt !== null ? a.doneAt - last.answeredAt : null,
      paintMs: painted - a.doneAt,
      snapshot: a.snapshot,
    };
  };
  return true;
`;

/** The table as shown now (ids, names, category and status cells, pager text, total). */
const snapshot = (browser) => browser.executeScript('return window.__scale.snapshot();', []);

// ---------------------------------------------------------------------------------------
// Measuring

const samples = new Map();

/**
 * Runs `act` (a click, or typing into the search box with kind 'input' and the value the box
 * ends up with as `target`) and waits until the table has changed; records the time under
 * `key` and returns the measurement, with the table as it was then in `snapshot`.
 */
async function measure(browser, key, act, { kind = 'click', target = null } = {}) {
  await browser.executeScript('window.__scale.arm(arguments[0], arguments[1]);', [kind, target]);
  await act();
  const r = await until(() => browser.executeScript('return window.__scale.result();', []), {
    timeout: ACTION_BOUND_MS,
    interval: 20,
    message: `the table to change after ${key}`,
  });
  assert.ok(r.ms >= 0 && r.ms < ACTION_BOUND_MS, `${key}: ${r.ms} ms`);
  if (!samples.has(key)) samples.set(key, []);
  samples.get(key).push(r);
  return r;
}

const round = (v) => (v === null || Number.isNaN(v) ? 'na' : Math.round(v));

/** key_ms (median), key_max_ms, and the median split into before-request/request/DOM/paint. */
function actionFigures() {
  const lines = [];
  for (const [key, rs] of samples) {
    const part = (f) => round(median(rs.map(f).filter((v) => v !== null)));
    lines.push(`${key}_ms=${round(median(rs.map((r) => r.ms)))}`);
    lines.push(`${key}_max_ms=${round(Math.max(...rs.map((r) => r.ms)))}`);
    lines.push(
      `${key}_split_ms=ui:${part((r) => r.beforeRequestMs)},request:${part((r) => r.requestMs)},` +
        `dom:${part((r) => r.domMsAfterAnswer)},paint:${part((r) => r.paintMs)}`,
    );
  }
  return lines;
}

/** Times the first screen of `launches` cold starts; returns the last app, still open. */
async function timeFirstScreens(label, dataDir, readySelectors) {
  const firstScreens = [];
  const memories = [];
  let app = null;
  for (let i = 0; i < LAUNCHES; i++) {
    if (app) await app.close();
    app = await launchApp(`${label}-${i + 1}`, { dataDir, readySelectors });
    const started = startedAtMsSinceBoot(app.appPid);
    // When the webview started loading the page (its time origin, from the epoch to the
    // boot clock), the heading (the page and its script are up), then each ready selector.
    const bootEpoch = Date.now() - nowMsSinceBoot();
    const navigationAt = (await app.browser.executeScript('return performance.timeOrigin;', [])) - bootEpoch;
    const seen = [app.timings.firstScreenMsSinceBoot, ...app.timings.ready.map((r) => r.msSinceBoot), navigationAt];
    firstScreens.push(seen.map((t) => t - started));
    // Memory once the first screen has its data and the status bar its answer.
    await waitForText(app.browser, 'status-reachable', 'Reachable', 30_000);
    memories.push(appMemory(app));
  }
  return { app, firstScreens, memories };
}

// ---------------------------------------------------------------------------------------
// The tests

const EMPTY_TIMEOUT_MS = 60_000 + LAUNCHES * 30_000;
test('first screen and memory on an empty database, for comparison', { timeout: EMPTY_TIMEOUT_MS }, async () => {
  const dataDir = tempDir('petstore-e2e-scale-empty-');
  let app = null;
  try {
    const run = await timeFirstScreens('scale-empty', dataDir, [sel('empty-state')]);
    app = run.app;
    record('first_screen_empty_ms', round(median(run.firstScreens.map((t) => t[1]))));
    record('memory_empty_mb', median(run.memories.map((m) => m.mb)));
  } finally {
    await app?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test(`the Pets screen at ${fmt(PETS)} pets`, { timeout: 240_000 + LAUNCHES * 60_000 }, async () => {
  const dataDir = tempDir('petstore-e2e-scale-');
  const db = path.join(dataDir, 'petstore.db');
  let app = null;
  try {
    if (SOURCE_DB) {
      // A copy: the app migrates and writes its own files next to it.
      for (const suffix of ['', '-wal']) {
        if (fs.existsSync(SOURCE_DB + suffix)) fs.copyFileSync(SOURCE_DB + suffix, db + suffix);
      }
      record('database', `${path.basename(SOURCE_DB)} (copy)`);
    } else {
      record('seed_ms', await seedDatabase(db, PETS, 'scale-seed'));
    }

    // The first screen: the table's rows, then the sidebar's "All pets" count.
    const run = await timeFirstScreens('scale', dataDir, [ROWS, `${sel('category-filter-all')} .count`]);
    app = run.app;
    const { browser } = app;
    record('first_screen_ms', round(median(run.firstScreens.map((t) => t[1]))));
    record('first_screen_max_ms', round(Math.max(...run.firstScreens.map((t) => t[1]))));
    record('first_screen_heading_ms', round(median(run.firstScreens.map((t) => t[0]))));
    record('first_screen_counts_ms', round(median(run.firstScreens.map((t) => t[2]))));
    // Process start → the webview loading the page (the app, GTK and WebKit starting) →
    // the heading (the UI's script run and painted) → the rows.
    const part = (f) => round(median(run.firstScreens.map(f)));
    record(
      'first_screen_split_ms',
      `app:${part((t) => t[3])},page:${part((t) => t[0] - t[3])},rows:${part((t) => t[1] - t[0])}`,
    );
    const memory = run.memories.at(-1);
    record('memory_mb', median(run.memories.map((m) => m.mb)));
    record('memory_pss_mb', median(run.memories.map((m) => m.pssMb)));
    record('processes', memory.breakdown);

    // What the table must show, asked of the app's own local API before any timing.
    const api = restClient(app.apiPort, await localApiKey(app));
    const totalOf = async (query) => {
      const r = await api.call('GET', `/pets?limit=1${query}`);
      assert.equal(r.status, 200, `GET /pets?limit=1${query}: ${r.status}`);
      return Number(r.headers.get('x-total-count'));
    };
    const total = await totalOf('');
    if (!SOURCE_DB) assert.equal(total, PETS, 'pets in the seeded database');
    record('pets', total);
    const firstIds = (await api.get(`/pets?sort=name&limit=${PAGE}`)).map((p) => p.id);
    const lastOffset = Math.floor((total - 1) / PAGE) * PAGE;
    const lastIds = (await api.get(`/pets?sort=-name&limit=${total - lastOffset}`)).map((p) => p.id).reverse();
    const categories = (await api.get('/categories?limit=100')).filter((c) => c.petCount > 0);
    assert.ok(categories.length > 0, 'the seed made categories with pets');
    const soldTotal = await totalOf('&status=sold');

    // What a person sees: the pager's text and the sidebar's counts, grouped.
    assert.ok(await browser.executeScript(INSTRUMENT, []));
    let shown = await snapshot(browser);
    assert.equal(shown.range, `1–${PAGE} of ${fmt(total)}`);
    assert.deepEqual(shown.ids, firstIds, 'the first page is the first pets by name');
    await waitForText(browser, 'category-filter-all', new RegExp(`All pets\\s*${fmt(total)}$`));
    for (const c of categories) {
      await waitForText(browser, `category-filter-${c.id}`, new RegExp(`${c.name}\\s*${fmt(c.petCount)}$`));
    }
    // Six-digit counts take room from the names beside them; every name must still show whole.
    const clipped = await browser.executeScript(
      `return [...document.querySelectorAll('nav[aria-label="Categories"] .name')]
         .filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent.trim());`,
      [],
    );
    assert.deepEqual(clipped, [], 'category names cut off in the sidebar');
    await screenshot(browser, `scale-pets-${SOURCE_DB ? 'bench' : 'e2e'}`);

    const search = await byTestId(browser, 'search');
    let offset = 0;
    for (let run = 0; run < REPEAT; run++) {
      // Next page, then straight to the last one, then back to the first.
      let r = await measure(browser, 'page_next', () => byTestId(browser, 'pager-next').then((b) => b.click()));
      offset += PAGE;
      assert.equal(r.snapshot.range, `${fmt(offset + 1)}–${fmt(offset + PAGE)} of ${fmt(total)}`);
      assert.equal(r.requests, 1);

      r = await measure(browser, 'page_last', () => byTestId(browser, 'pager-last').then((b) => b.click()));
      assert.equal(r.snapshot.range, `${fmt(lastOffset + 1)}–${fmt(total)} of ${fmt(total)}`);
      assert.deepEqual(r.snapshot.ids, lastIds, 'the last page shows the last pets by name');
      if (run === 0) {
        await browser.executeScript(`document.querySelector('[data-testid="pager-range"]').scrollIntoView();`, []);
        await screenshot(browser, `scale-pets-last-page-${SOURCE_DB ? 'bench' : 'e2e'}`);
      }

      r = await measure(browser, 'page_first', () => byTestId(browser, 'pager-first').then((b) => b.click()));
      assert.deepEqual(r.snapshot.ids, firstIds, 'back on the first page');
      offset = 0;

      // A category, and back to all pets.
      const c = categories[run % categories.length];
      r = await measure(browser, 'filter', () => byTestId(browser, `category-filter-${c.id}`).then((b) => b.click()));
      assert.equal(r.snapshot.total, fmt(c.petCount), `the pager counts the pets of ${c.name}`);
      assert.deepEqual([...new Set(r.snapshot.categories)], [c.name], `only ${c.name} shown`);
      r = await measure(browser, 'filter_all', () => byTestId(browser, 'category-filter-all').then((b) => b.click()));
      assert.equal(r.snapshot.total, fmt(total));

      // The "sold" status chip on and off.
      r = await measure(browser, 'status', () => byTestId(browser, 'filter-sold').then((b) => b.click()));
      assert.equal(r.snapshot.total, fmt(soldTotal));
      assert.deepEqual([...new Set(r.snapshot.statuses)], ['sold']);
      r = await measure(browser, 'status_off', () => byTestId(browser, 'filter-sold').then((b) => b.click()));
      assert.equal(r.snapshot.total, fmt(total));

      // A search typed key by key, timed from the last key; then cleared with Backspace.
      const term = SEARCHES[run % SEARCHES.length];
      await search.click();
      r = await measure(browser, 'search', () => search.addValue(term), { kind: 'input', target: term });
      assert.ok(r.snapshot.ids.length > 0, `pets named like ${term}`);
      assert.ok(
        r.snapshot.names.every((n) => containsWithOneTypo(n.toLowerCase(), term.toLowerCase())),
        `every row's name contains ${term}, one typo allowed: ${r.snapshot.names.join(', ')}`,
      );
      assert.ok(r.beforeRequestMs >= DEBOUNCE_MS, `the request waited for the debounce: ${r.beforeRequestMs} ms`);
      r = await measure(browser, 'search_clear', () => search.addValue('\uE003'.repeat(term.length)), {
        kind: 'input',
        target: '',
      });
      assert.equal(r.snapshot.total, fmt(total));
      assert.deepEqual(r.snapshot.ids, firstIds);
    }
    // The debounce the UI really applied: from the last key's input event to the table's
    // list_pet_rows request leaving (median of the runs), its timer and the reactivity after it
    // included. DEBOUNCE_MS is only what PetsScreen.svelte asks for.
    record('search_debounce_ms', round(median(samples.get('search').map((r) => r.beforeRequestMs))));
    shown = await snapshot(browser);
    assert.deepEqual(shown.ids, firstIds);
  } finally {
    await app?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    const lines = [
      ...[...figures].map(([k, v]) => `${k}=${v}`),
      ...actionFigures(),
      `repeat=${REPEAT}`,
      `launches=${LAUNCHES}`,
      `binary=${process.env.APP_BIN ?? 'target/debug/petstore-desktop'}`,
    ];
    writeFigures(OUT, lines);
  }
});

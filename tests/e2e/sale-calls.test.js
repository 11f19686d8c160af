// What one counter sale from the Pets screen costs the window in calls to the app, in the
// real app: every IPC call the webview sends from the click on a row's Sell until the
// screen has settled (the row shows the new stock, the change event handled), counted by
// command. A sale used to cost 59 (the dialog's and every row's stock asked pet by pet, the
// page and the sidebar reloaded twice); now 3. The count is written to
// target/e2e/sale-calls.txt and must stay small.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  ARTIFACTS,
  TEST_TIMEOUT_MS,
  click,
  launchApp,
  localApiKey,
  navigate,
  restClient,
  sel,
  until,
  waitForText,
  waitVisible,
  writeFigures,
} from './helpers.js';

// A full page of pets (25) and more, so a reload of the page costs what it costs a shop.
const PETS = 30;
// What a sale may cost: the sale, its row read again and the low-stock badge counted again
// (3), each of the last two once more if the app's event came after the window had already
// acted on its own hint (a loaded machine). Not the old 59.
const MOST_CALLS = 5;
// The window is quiet when no call was sent for this long.
const QUIET_MS = 1_500;

// Counts the webview's IPC calls. Tauri's invoke cannot be replaced (a read-only property),
// but on Linux it sends each command with fetch('ipc://localhost/<command>'), looked up when
// called. The status bar's poll (get_status, every 10 s) is a clock, not the sale's: left out.
const COUNTER = `
  const s = (window.__calls = { list: [], lastAt: performance.now() });
  const fetch = window.fetch;
  window.fetch = function (url, init) {
    const u = String(url);
    if (u.startsWith('ipc:')) {
      const command = decodeURIComponent(u.slice(u.lastIndexOf('/') + 1));
      if (command !== 'get_status') {
        s.list.push(command);
        s.lastAt = performance.now();
      }
    }
    return fetch.call(this, url, init);
  };
  return true;
`;

const calls = (browser) =>
  browser.executeScript('return { list: window.__calls.list, quietMs: performance.now() - window.__calls.lastAt };', []);

test('a counter sale from the Pets screen costs a handful of calls', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('sale-calls');
  const { browser } = app;
  try {
    const api = restClient(app.apiPort, await localApiKey(app));
    const dogs = await api.post('/categories', { name: 'Dogs' });
    let first = null;
    for (let i = 1; i <= PETS; i++) {
      const pet = await api.post('/pets', { name: `Pet ${String(i).padStart(2, '0')}`, categoryId: dogs.id, price: '10.00' });
      await api.put(`/store/inventory/${pet.id}`, { quantity: 5 });
      first ??= pet;
    }

    await navigate(browser, 'pets');
    await waitVisible(browser, sel(`pet-row-${first.id}`));
    await waitForText(browser, `pet-row-${first.id}`, /Pet 01/);
    // The page settled (every row's stock shown) before counting starts.
    await until(
      async () =>
        (await browser.executeScript(
          "return [...document.querySelectorAll('[data-testid=pet-stock]')].filter((e) => e.textContent.trim() === '5').length;",
          [],
        )) === 25,
      { message: 'the page with every stock' },
    );
    await new Promise((r) => setTimeout(r, QUIET_MS));
    await browser.executeScript(COUNTER, []);

    await click(browser, `order-pet-${first.id}`);
    await waitVisible(browser, sel('sell-now'), { enabled: true });
    await click(browser, 'sell-now');
    await waitForText(browser, 'toast', /Counter sale #\d+: 1 × Pet 01/);
    await until(
      async () =>
        (await browser.executeScript(
          `return document.querySelector('[data-testid="pet-row-${first.id}"] [data-testid="pet-stock"]')?.textContent.trim();`,
          [],
        )) === '4',
      { message: 'the row with the new stock' },
    );
    const { list } = await until(
      async () => {
        const c = await calls(browser);
        return c.quietMs >= QUIET_MS ? c : null;
      },
      { timeout: 15_000, message: 'the window quiet after the sale' },
    );

    const byCommand = {};
    for (const command of list) byCommand[command] = (byCommand[command] ?? 0) + 1;
    writeFigures(path.join(ARTIFACTS, 'sale-calls.txt'), [
      `sale_calls=${list.length}`,
      ...Object.entries(byCommand).map(([command, n]) => `sale_calls_${command.replace(/\W/g, '_')}=${n}`),
    ]);
    assert.equal(byCommand.place_order, 1, 'one sale');
    assert.ok(list.length <= MOST_CALLS, `a sale cost ${list.length} calls (${JSON.stringify(byCommand)})`);
  } finally {
    await app.close();
  }
});

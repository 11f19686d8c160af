// Scenario 7: selling while the server is down. A till in remote mode (set up by
// the environment, as IT provisions tills) on a real petstore-server with a pet in stock;
// the server becomes unreachable; the clerk sells 3 through the Pets screen's sale dialog;
// the badge says 3 to send; the app is killed with SIGKILL and started again on the same
// data folder, still offline: the 3 are still there; the server comes back: it has exactly
// 3 orders and the stock is 3 less, still so 5 s later, and the till says Synced.
//
// Once for each way a server is lost:
// - stopped: nothing listens on its port any more, connections are refused at once;
// - black hole: the till talks to the server through a TCP proxy that then accepts
//   connections and never answers (and lets the open ones go silent), so that every
//   request runs into the app's time-out;
// - lost answers: the same proxy passes the requests on and throws the answers away: the
//   first sale is made on the server and the till never hears so. It keeps it, and sends it
//   again (after the restart, and when the server is back) with the same Idempotency-Key:
//   the server still makes it once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  click,
  idsWithPrefix,
  killApp,
  launchApp,
  navigate,
  probe,
  screenshot,
  sel,
  startProxy,
  startServer,
  tempDir,
  textOf,
  waitForText,
  waitGone,
  waitVisible,
  until,
} from './helpers.js';

const STOCK = 5;
const SALES = 3;
/** The replay tries every 5 s at most; the app's requests give up after 5 s. */
const BACK_TIMEOUT_MS = 30_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The pet's orders and stock as the server has them, asked directly. */
async function onServer(server, petId) {
  const orders = await server.api.get(`/store/orders?petId=${petId}&limit=100`);
  const stock = (await server.api.get(`/store/inventory/${petId}`)).quantity;
  return { orders, stock };
}

/** One counter sale of 1 through the Pets row's Order dialog, as a clerk makes it. */
async function sellOne(browser, petId, stockBefore) {
  await click(browser, `order-pet-${petId}`);
  await waitVisible(browser, sel('order-dialog'));
  // The dialog's stock is the till's own copy: it knows the sales it has not sent yet.
  await waitForText(browser, 'order-stock', String(stockBefore));
  await click(browser, 'counter-sale');
  // The first sale into a black hole waits for the app's 5 s time-out before it is kept.
  await waitGone(browser, sel('order-dialog'), 15_000);
  const toast = await waitForText(browser, 'toast', /Counter sale (#\d+|offline \d+): 1 × /);
  return toast.replace(/\s+/g, ' ');
}

/** The till's outbox as its dialog lists it: [{seq, text}], then closes the dialog. */
async function outboxRows(browser) {
  await click(browser, 'outbox-badge');
  await waitVisible(browser, sel('outbox-dialog'));
  await waitVisible(browser, '[data-testid="outbox-dialog"] [data-testid^="outbox-row-"]');
  const seqs = await idsWithPrefix(browser, 'outbox-row-');
  const rows = [];
  for (const seq of seqs) rows.push({ seq, text: await textOf(browser, `outbox-row-${seq}`) });
  await browser.keys('Escape');
  await waitGone(browser, sel('outbox-dialog'));
  return rows;
}

async function offlineSales(t, outage) {
  const label = `offline-sales-${outage}`;
  // Behind the proxy, requests carry the proxy's port: the server is told the name, as one
  // behind a reverse proxy would be.
  const viaProxy = outage !== 'stopped';
  const server = await startServer(label, { allowedHosts: viaProxy ? ['127.0.0.1'] : [] });
  const proxy = viaProxy ? await startProxy(label, server.port) : null;
  const dataDir = tempDir('petstore-e2e-data-');
  let app;
  try {
    const pet = await server.api.post('/pets', { name: 'Goldie' });
    await server.api.put(`/store/inventory/${pet.id}`, { quantity: STOCK });
    const url = proxy ? proxy.url : server.url;
    const env = { PETSTORE_REMOTE_URL: url, PETSTORE_REMOTE_KEY: server.key };

    app = await launchApp(label, { dataDir, env });
    let { browser } = app;
    await waitForText(browser, 'status-backend', `Remote server · ${url}`);
    await waitForText(browser, 'status-sync', 'Synced', 20_000);
    await waitVisible(browser, sel(`pet-row-${pet.id}`));

    // The server is lost.
    const lostAt = Date.now();
    if (outage === 'stopped') await server.halt();
    else if (outage === 'blackhole') proxy.blackhole();
    else proxy.loseAnswers();

    // Three sales at the counter, each kept by the till.
    for (let i = 0; i < SALES; i++) {
      const toast = await sellOne(browser, pet.id, STOCK - i);
      t.diagnostic(`sale ${i + 1}: ${toast}`);
      await waitForText(browser, 'outbox-pending', `${i + 1} to send`);
    }
    t.diagnostic(`offline_sales_ms=${Date.now() - lostAt}`);
    await waitForText(browser, 'status-sync', /^Offline since \d/);
    assert.equal(await textOf(browser, 'outbox-attention'), null);
    if (outage === 'blackhole') {
      // The server itself is up and has had none of them.
      assert.ok(proxy.held > 0, 'the app never tried the black-holed proxy');
      assert.deepEqual(await onServer(server, pet.id), { orders: [], stock: STOCK });
    }
    if (outage === 'lost-answers') {
      // The first sale was made on the server; the till kept it all the same.
      const now = await onServer(server, pet.id);
      assert.equal(now.orders.length, 1, `the first sale's request reaches the server: ${JSON.stringify(now)}`);
      assert.equal(now.stock, STOCK - 1);
    }
    const heldBeforeKill = proxy?.held ?? 0;

    // A crash: the app is killed, no chance to tidy up, and started again, still offline.
    await killApp(app);
    app = await launchApp(`${label}-restart`, { dataDir, apiPort: app.apiPort, env });
    browser = app.browser;
    await waitForText(browser, 'outbox-pending', `${SALES} to send`, 20_000);
    await waitForText(browser, 'status-sync', /^Offline since \d/, 20_000);
    const kept = await outboxRows(browser);
    assert.equal(kept.length, SALES, `the outbox after the restart: ${JSON.stringify(kept)}`);
    for (const row of kept) {
      assert.match(row.text, new RegExp(`^Sale of 1 × Goldie\\b`), JSON.stringify(row));
      assert.match(row.text, /Waiting to send/);
    }
    if (outage === 'lost-answers') {
      // The restarted till sends the first sale again (its answer lost again): still one.
      await until(() => proxy.held > heldBeforeKill, { timeout: 15_000, message: 'the restarted till to try the server' });
      await sleep(1_500);
      const now = await onServer(server, pet.id);
      assert.equal(now.orders.length, 1, `the first sale sent again is not made twice: ${JSON.stringify(now)}`);
    }
    // The till's copy still counts them.
    await click(browser, `order-pet-${pet.id}`);
    await waitForText(browser, 'order-stock', String(STOCK - SALES));
    await browser.keys('Escape');
    await waitGone(browser, sel('order-dialog'));

    // The server comes back: the 3 reach it, once each.
    const backAt = Date.now();
    if (proxy) proxy.forward();
    else await server.resume();
    let seen;
    await until(
      async () => {
        seen = await onServer(server, pet.id);
        return seen.orders.length >= SALES;
      },
      { timeout: BACK_TIMEOUT_MS, interval: 250, message: `${SALES} orders on the server` },
    ).catch((e) => {
      throw new Error(`${e.message}; it has ${JSON.stringify(seen)}`);
    });
    t.diagnostic(`replayed_ms=${Date.now() - backAt}`);
    const check = ({ orders, stock }) => {
      assert.equal(orders.length, SALES, `orders on the server: ${JSON.stringify(orders)}`);
      assert.equal(stock, STOCK - SALES, 'stock on the server');
      for (const order of orders) {
        assert.equal(order.petId, pet.id);
        assert.equal(order.quantity, 1);
        assert.equal(order.complete, true, `a counter sale is completed: ${JSON.stringify(order)}`);
      }
      assert.equal(new Set(orders.map((o) => o.id)).size, SALES);
    };
    check(seen);

    // The till says so: the badge goes, Synced.
    await waitGone(browser, sel('outbox-badge'), BACK_TIMEOUT_MS);
    await waitForText(browser, 'status-sync', 'Synced', BACK_TIMEOUT_MS);

    // And nothing is sent twice afterwards.
    await sleep(5_000);
    check(await onServer(server, pet.id));
    assert.equal(await probe(browser, sel('outbox-badge')), null, 'the badge came back');
    // The till's copy agrees with the server: the stock, and the sales under the server's
    // numbers instead of the temporary ones.
    await click(browser, `order-pet-${pet.id}`);
    await waitForText(browser, 'order-stock', String(STOCK - SALES));
    await browser.keys('Escape');
    await waitGone(browser, sel('order-dialog'));
    await navigate(browser, 'orders');
    await click(browser, 'tab-completed');
    const serverIds = seen.orders.map((o) => o.id).sort((a, b) => a - b);
    await browser
      .waitUntil(async () => {
        const shown = (await idsWithPrefix(browser, 'order-row-')).sort((a, b) => a - b);
        return JSON.stringify(shown) === JSON.stringify(serverIds);
      })
      .catch(async () => {
        throw new Error(
          `the Completed tab shows orders ${await idsWithPrefix(browser, 'order-row-')}, the server has ${serverIds}`,
        );
      });
  } catch (e) {
    // What the window showed when it went wrong, beside the logs.
    if (app?.browser) await screenshot(app.browser, `${label}-failure`).catch(() => {});
    throw e;
  } finally {
    try {
      await app?.close();
    } finally {
      await proxy?.close();
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

test('sales taken while the server is stopped reach it once, through a kill -9', { timeout: TEST_TIMEOUT_MS }, (t) =>
  offlineSales(t, 'stopped'),
);

test('sales taken while the server is a black hole reach it once, through a kill -9', { timeout: TEST_TIMEOUT_MS }, (t) =>
  offlineSales(t, 'blackhole'),
);

test('a sale whose answer was lost, sent again, is made once, through a kill -9', { timeout: TEST_TIMEOUT_MS }, (t) =>
  offlineSales(t, 'lost-answers'),
);

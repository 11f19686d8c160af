// Scenario 5: a picture of every screen with a shop's worth of data, for people to look at:
// PNGs under target/e2e/ (WebDriver screenshots of the window, and one capture of the whole
// X display with ImageMagick's `import`). And remote mode while the server cannot be
// reached: the status bar with the outbox's badge, and the Outbox with a sale the server
// refused (the user guide's "When the server is down"), then what the guide says to do
// with it: Send again is refused while there is no stock; after a stock correction it goes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import {
  ARTIFACTS,
  TEST_TIMEOUT_MS,
  click,
  idsWithPrefix,
  launchApp,
  localApiKey,
  navigate,
  restClient,
  screenshot,
  sel,
  startProxy,
  startServer,
  tempDir,
  type,
  waitForText,
  waitGone,
  waitVisible,
} from './helpers.js';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** A small shop: categories, pets in every status, stock, open and completed orders, history. */
async function seed(api) {
  const cat = {};
  for (const [name, description] of [
    ['Dogs', 'Puppies and adult dogs'],
    ['Cats', 'Kittens and cats'],
    ['Fish', 'Freshwater and marine'],
    ['Birds', null],
  ]) {
    cat[name] = (await api.post('/categories', { name, description })).id;
  }
  const pets = {};
  for (const [name, category, stock, description, price] of [
    ['Rex', 'Dogs', 3, 'Labrador puppy, 10 weeks', '890.00'],
    ['Bella', 'Dogs', 1, null, '650.00'],
    ['Max', 'Dogs', 0, null, '720.00'],
    ['Luna', 'Cats', 4, 'British shorthair', '480.00'],
    ['Milo', 'Cats', 2, null, '350.00'],
    ['Nemo', 'Fish', 25, 'Clownfish', '24.90'],
    ['Goldie', 'Fish', 12, null, '4.50'],
    ['Kiwi', 'Birds', 6, 'Budgie, green', '39.00'],
  ]) {
    const sku = `40063813${String(Object.keys(pets).length + 1).padStart(5, '0')}`;
    const pet = await api.post('/pets', { name, categoryId: cat[category], description, price, sku });
    pets[name] = pet.id;
    await api.put(`/store/inventory/${pet.id}`, { quantity: stock });
  }
  // History for Nemo: a delivery and a loss, with reasons.
  await api.expect(200, 'POST', `/store/inventory/${pets.Nemo}/adjustments`, { delta: 10, reason: 'Delivery from supplier' });
  await api.expect(200, 'POST', `/store/inventory/${pets.Nemo}/adjustments`, { delta: -2, reason: 'Died in tank 3' });
  await api.expect(200, 'POST', `/store/inventory/${pets.Nemo}/adjustments`, { delta: 1, reason: 'Recount' });
  // Orders: Bella's only one makes her pending; a counter sale; two open orders.
  await api.post('/store/orders', { petId: pets.Bella, quantity: 1 });
  await api.post('/store/orders', { petId: pets.Luna, quantity: 1, complete: true });
  await api.post('/store/orders', { petId: pets.Nemo, quantity: 3 });
  await api.post('/store/orders', { petId: pets.Kiwi, quantity: 2 });
  return { cat, pets };
}

test('screenshots of every screen', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const app = await launchApp('screenshots');
  const { browser } = app;
  const files = [];
  try {
    const api = restClient(app.apiPort, await localApiKey(app));
    const { pets } = await seed(api);

    // Pets, with data (the window refreshes on the API's changes).
    await waitVisible(browser, sel(`pet-row-${pets.Kiwi}`));
    await waitForText(browser, `status-${pets.Bella}`, 'pending');
    await waitForText(browser, 'status-reachable', 'Reachable');
    files.push(await screenshot(browser, 'pets'));

    await navigate(browser, 'orders');
    await waitVisible(browser, 'table [data-testid^="order-row-"]');
    files.push(await screenshot(browser, 'orders'));

    await navigate(browser, 'inventory');
    await waitVisible(browser, sel(`inventory-row-${pets.Nemo}`));
    files.push(await screenshot(browser, 'inventory'));
    await click(browser, `history-${pets.Nemo}`);
    await waitVisible(browser, sel('history-dialog'));
    await waitVisible(browser, '[data-testid="history-dialog"] [data-testid^="history-row-"]');
    files.push(await screenshot(browser, 'inventory-history'));

    // The whole X display, dialog open, with ImageMagick, when the tool is there.
    if (process.env.DISPLAY) {
      const file = path.join(ARTIFACTS, 'window-root.png');
      try {
        await promisify(execFile)('import', ['-window', 'root', file], { timeout: 20_000 });
        files.push(file);
      } catch (e) {
        t.diagnostic(`import -window root failed: ${e.message}`);
      }
    }

    await browser.keys('Escape');
    await navigate(browser, 'categories');
    await waitVisible(browser, 'table [data-testid^="category-row-"]');
    files.push(await screenshot(browser, 'categories'));

    await navigate(browser, 'settings');
    await waitVisible(browser, sel('save-settings'));
    files.push(await screenshot(browser, 'settings'));
  } finally {
    await app.close();
  }
  for (const file of files) {
    const head = fs.readFileSync(file).subarray(0, 4);
    assert.deepEqual(head, PNG_MAGIC, `${file} is not a PNG`);
    assert.ok(fs.statSync(file).size > 5_000, `${file} is suspiciously small`);
    console.log(`screenshot=${file}`);
  }
  assert.ok(files.length >= 6, `expected every screen, got ${files.length} files`);
});

/** A counter sale through the Pets row's Order dialog, as a clerk makes it. */
async function counterSale(browser, petId, quantity) {
  await click(browser, `order-pet-${petId}`);
  await waitVisible(browser, sel('order-dialog'));
  await type(browser, 'order-quantity', quantity);
  await click(browser, 'counter-sale');
  await waitGone(browser, sel('order-dialog'), 15_000);
}

test('screenshots of remote mode with the server down; a refused sale sent again',  { timeout: TEST_TIMEOUT_MS }, async () => {
  // The till reaches the server through a proxy that can become a black hole, so that the
  // server itself stays up for "another till" to sell meanwhile.
  const server = await startServer('screenshots-offline', { allowedHosts: ['127.0.0.1'] });
  const proxy = await startProxy('screenshots-offline', server.port);
  const dataDir = tempDir('petstore-e2e-data-');
  const files = [];
  let app;
  try {
    const { pets } = await seed(server.api);
    app = await launchApp('screenshots-offline', {
      dataDir,
      env: { PETSTORE_REMOTE_URL: proxy.url, PETSTORE_REMOTE_KEY: server.key },
    });
    const { browser } = app;
    await waitForText(browser, 'status-sync', 'Synced', 20_000);
    await waitVisible(browser, sel(`pet-row-${pets.Kiwi}`));

    // The network goes; another till, still connected, sells both of Milo's.
    proxy.blackhole();
    await server.api.post('/store/orders', { petId: pets.Milo, quantity: 2, complete: true });
    // Three sales here, one of them a Milo this till still thinks it has.
    await counterSale(browser, pets.Rex, 1);
    await counterSale(browser, pets.Milo, 1);
    await counterSale(browser, pets.Goldie, 2);
    await waitForText(browser, 'outbox-pending', '3 to send');
    await waitForText(browser, 'status-sync', /^Offline since/);
    await waitGone(browser, sel('toast'), 10_000);
    files.push(await screenshot(browser, 'remote-offline'));

    // The server is back: two go through, Milo's is refused and needs attention.
    proxy.forward();
    await waitForText(browser, 'outbox-attention', /1 needs attention/, 30_000);
    await waitGone(browser, sel('outbox-pending'), 30_000);
    await waitForText(browser, 'status-sync', 'Synced', 30_000);
    await click(browser, 'outbox-badge');
    await waitVisible(browser, sel('outbox-dialog'));
    await waitVisible(browser, '[data-testid="outbox-dialog"] [data-testid^="outbox-reason-"]');
    const rows = await idsWithPrefix(browser, 'outbox-row-');
    assert.equal(rows.length, 1, `the outbox lists ${rows}`);
    files.push(await screenshot(browser, 'remote-outbox'));

    // The other two are on the server; Milo was not oversold.
    assert.equal((await server.api.get(`/store/orders?petId=${pets.Rex}`)).length, 1);
    assert.equal((await server.api.get(`/store/orders?petId=${pets.Goldie}`)).length, 1);
    assert.equal((await server.api.get(`/store/inventory/${pets.Milo}`)).quantity, 0);

    // What the guide says to do. Send again with no stock: refused at once, the write stays.
    const [seq] = rows;
    await click(browser, `outbox-retry-${seq}`);
    await waitVisible(browser, '[data-testid="outbox-dialog"] [data-testid="error-alert"]');
    await waitVisible(browser, sel(`outbox-row-${seq}`));
    await waitForText(browser, 'outbox-attention', /1 needs attention/);
    await browser.keys('Escape');
    await waitGone(browser, sel('outbox-dialog'));
    // The Milo was there after all: the count corrected, then Send again; it is sold once.
    await navigate(browser, 'inventory');
    await click(browser, `adjust-stock-${pets.Milo}`);
    await type(browser, 'adjust-delta', 1);
    await type(browser, 'adjust-reason', 'Stock-take correction');
    await click(browser, 'save-adjustment');
    await waitGone(browser, sel('adjust-stock-dialog'));
    await waitForText(browser, `quantity-${pets.Milo}`, '1');
    await click(browser, 'outbox-badge');
    await click(browser, `outbox-retry-${seq}`);
    await waitGone(browser, sel('outbox-badge'), 30_000);
    const milo = await server.api.get(`/store/orders?petId=${pets.Milo}`);
    assert.equal(milo.length, 2, `Milo's orders on the server: ${JSON.stringify(milo)}`);
    assert.equal((await server.api.get(`/store/inventory/${pets.Milo}`)).quantity, 0);
  } finally {
    try {
      await app?.close();
    } finally {
      await proxy.close();
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  for (const file of files) {
    assert.deepEqual(fs.readFileSync(file).subarray(0, 4), PNG_MAGIC, `${file} is not a PNG`);
    console.log(`screenshot=${file}`);
  }
});

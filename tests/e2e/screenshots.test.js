// Scenario 5: a picture of every screen with a shop's worth of data, for people to look at:
// PNGs under target/e2e/ (WebDriver screenshots of the window, and one capture of the whole
// X display with ImageMagick's `import`).
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
  launchApp,
  localApiKey,
  navigate,
  restClient,
  screenshot,
  sel,
  waitForText,
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
  for (const [name, category, stock, description] of [
    ['Rex', 'Dogs', 3, 'Labrador puppy, 10 weeks'],
    ['Bella', 'Dogs', 1, null],
    ['Max', 'Dogs', 0, null],
    ['Luna', 'Cats', 4, 'British shorthair'],
    ['Milo', 'Cats', 2, null],
    ['Nemo', 'Fish', 25, 'Clownfish'],
    ['Goldie', 'Fish', 12, null],
    ['Kiwi', 'Birds', 6, 'Budgie, green'],
  ]) {
    const pet = await api.post('/pets', { name, categoryId: cat[category], description });
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
    await waitVisible(browser, '[data-testid="history-dialog"] [data-testid^="adjustment-row-"]');
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

// The counter end to end, in the real app: a barcode scanned into the window (its
// keystrokes, then Enter) sells the pet at its price; the order's receipt shows the total;
// the Sales screen shows today's takings; an import with a bad line names the line and
// imports nothing. Screenshots of the new screens land in target/e2e/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  click,
  launchApp,
  localApiKey,
  navigate,
  probe,
  restClient,
  scan,
  screenshot,
  sel,
  tempDir,
  textOf,
  type,
  waitForText,
  waitGone,
  waitVisible,
} from './helpers.js';

const BARCODE = '4006381333931';

test('the counter: a scan sells, the receipt, the day\'s takings, an import refused', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('counter');
  const { browser } = app;
  const files = tempDir('petstore-e2e-import-');
  try {
    const api = restClient(app.apiPort, await localApiKey(app));
    // The shop counts its days where this machine is, as the window does.
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    await api.put('/store/settings', { shopName: 'Paws & Co', currency: 'EUR', timeZone, lowStockBelow: 2 });
    const dogs = await api.post('/categories', { name: 'Dogs' });
    const rex = await api.post('/pets', { name: 'Rex', categoryId: dogs.id, price: '12.50', sku: BARCODE });
    await api.put(`/store/inventory/${rex.id}`, { quantity: 3 });

    await navigate(browser, 'pets');
    await waitVisible(browser, sel(`pet-row-${rex.id}`));
    await scan(browser, BARCODE);
    await waitForText(browser, 'sale-total', /12[.,]50/);
    await screenshot(browser, 'counter-sale');
    await click(browser, 'sell-now');
    await waitForText(browser, 'toast', /Counter sale #\d+: 1 × Rex/);

    const [order] = await api.get(`/store/orders?petId=${rex.id}`);
    assert.equal(order.complete, true, 'a counter sale is completed at once');
    assert.equal(order.total, '12.50');
    assert.equal((await api.get(`/store/inventory/${rex.id}`)).quantity, 2);

    // An unknown code says so, and sells nothing.
    await scan(browser, '999000111');
    await waitForText(browser, 'scan-message', /999000111/);

    // The receipt of the completed order.
    await navigate(browser, 'orders');
    await click(browser, 'tab-completed');
    await waitVisible(browser, sel(`order-row-${order.id}`));
    await click(browser, `receipt-${order.id}`);
    await waitVisible(browser, sel('receipt'));
    assert.match(await textOf(browser, 'receipt'), /Paws & Co/);
    assert.match(await textOf(browser, 'receipt-total'), /12[.,]50/);
    await screenshot(browser, 'counter-receipt');
    await browser.keys(['Escape']);
    await waitGone(browser, sel('receipt'));

    // Today's takings.
    await navigate(browser, 'sales');
    await waitForText(browser, 'sales-today-revenue', /12[.,]50/);
    await waitVisible(browser, sel('sales-chart'));
    await screenshot(browser, 'sales');

    // An import whose third line names a category the shop does not have: refused with its
    // line, and nothing is offered to import, nor written.
    const file = path.join(files, 'pets.csv');
    fs.writeFileSync(file, 'name,category,price,sku\nBella,Dogs,9.99,B-1\nTom,Cats,4.50,B-2\n');
    await navigate(browser, 'settings');
    await type(browser, 'import-path', file);
    await click(browser, 'import-check');
    await waitForText(browser, 'import-error', /line 3.*category/i);
    await browser.executeScript(
      "document.querySelector('[data-testid=\"import-error\"]').scrollIntoView({ block: 'center' })",
      [],
    );
    const run = await probe(browser, sel('import-run'));
    assert.ok(run === null || !run.visible || !run.enabled, `nothing to import after a refusal: ${JSON.stringify(run)}`);
    assert.equal((await api.call('GET', '/pets')).headers.get('x-total-count'), '1', 'no pet was imported');
    await screenshot(browser, 'settings-import-refused');

    // Fixed, it is checked again and then imported.
    fs.writeFileSync(file, 'name,category,price,sku\nBella,Dogs,9.99,B-1\nTom,Dogs,4.50,B-2\n');
    await click(browser, 'import-check');
    await waitForText(browser, 'import-result', /2 pets/);
    await click(browser, 'import-run');
    await browser.waitUntil(
      async () => (await api.call('GET', '/pets')).headers.get('x-total-count') === '3',
      { timeout: 10_000, timeoutMsg: 'the two pets of the file were not imported' },
    );
  } finally {
    await app.close();
    fs.rmSync(files, { recursive: true, force: true });
  }
});

// The API reference at /docs, as an integrator sees it: headless Chromium against the real
// petstore-server, with no network beyond loopback. It must show every operation and
// schema, mark GET /pets/{petId} deprecated with its sunset, badge the beta and
// experimental operations, offer "Try it out" everywhere but GET /store/orders, and work.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { KEY, startServer } from './server.js';

const SHOTS = resolve(import.meta.dirname, '../../target/docs');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

let server, browser, page, doc;
const requests = [];
const problems = [];

/** Every operation of the document with the DOM id Swagger UI gives it. */
function operations() {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => {
      const op = item[method];
      const tag = op.tags?.[0] ?? 'default';
      return { path, method, op, id: `operations-${tag}-${op.operationId}` };
    }),
  );
}

before(async () => {
  server = await startServer();
  doc = await (await fetch(`${server.origin}/openapi.json`)).json();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${server.origin}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('every operation and every schema of the document is on the page', async () => {
  const ops = operations();
  assert.equal(await page.locator('.opblock').count(), ops.length);
  for (const { id, op } of ops) {
    const block = page.locator(`[id="${id}"]`);
    assert.equal(await block.count(), 1, `${op.operationId} is missing`);
    assert.equal(await block.locator('.opblock-summary-operation-id').textContent(), op.operationId);
  }
  const schemas = Object.keys(doc.components.schemas);
  const shown = await page.locator('.models .model-container').evaluateAll((els) => els.map((e) => e.id));
  assert.deepEqual(shown.sort(), schemas.map((name) => `model-${name}`).sort());
});

test('GET /pets/{petId} is marked deprecated with its sunset date', async () => {
  const [getPet] = operations().filter(({ path, method }) => path === '/pets/{petId}' && method === 'get');
  const block = page.locator(`[id="${getPet.id}"]`);
  assert.match(await block.getAttribute('class'), /opblock-deprecated/);
  const badge = block.locator('.petstore-badge--deprecated');
  assert.equal(await badge.textContent(), 'deprecated · sunset 2027-06-30');
  assert.ok(await badge.isVisible());
  // No other operation is deprecated.
  assert.equal(await page.locator('.petstore-badge--deprecated').count(), 1);
});

test('the beta and experimental operations carry their stability badge', async () => {
  const marked = operations().filter(({ op }) => op['x-stability']);
  // The stock adjustment, the change feed (GET /changes, GET /events) and a pet's stock
  // history are beta; the shop-wide list of adjustments is experimental.
  assert.deepEqual(
    marked.map(({ op }) => `${op.operationId}: ${op['x-stability']}`).sort(),
    [
      'adjust_inventory: beta',
      'follow_changes: beta',
      'get_stock_history: beta',
      'list_changes: beta',
      'list_inventory_adjustments: experimental',
    ],
  );
  for (const { id, op } of marked) {
    const badge = page.locator(`[id="${id}"] .petstore-badge--${op['x-stability']}`);
    assert.equal(await badge.textContent(), op['x-stability']);
    assert.ok(await badge.isVisible(), `${op.operationId} badge is not visible`);
  }
  assert.equal(await page.locator('.petstore-badge--beta, .petstore-badge--experimental').count(), marked.length);
});

test('"Try it out" is offered on every operation but GET /store/orders', async () => {
  const hidden = [];
  for (const { id, op } of operations()) {
    const block = page.locator(`[id="${id}"]`);
    await block.locator('.opblock-summary-control').click();
    await block.locator('.opblock-body').waitFor();
    // The body fills in as Swagger UI resolves the operation; the button, when there is
    // one, comes with the Parameters header. Counted before that, a slow machine saw none.
    await block.locator('h4.opblock-title', { hasText: 'Parameters' }).waitFor();
    const buttons = await block.locator('.try-out__btn').count();
    if (buttons === 0) hidden.push(op.operationId);
    else assert.equal(buttons, 1, op.operationId);
    await block.locator('.opblock-summary-control').click();
    await block.locator('.opblock-body').waitFor({ state: 'detached' });
  }
  assert.deepEqual(hidden, ['list_orders']);
});

test('"Try it out" with the key from Authorize reaches this server', async () => {
  await page.locator('.auth-wrapper .authorize').click();
  const dialog = page.locator('.dialog-ux');
  // The dialog has a form per security scheme (the staff's session and a manager's approval
  // too); the API key goes in the Bearer one.
  const bearer = dialog.locator('form').filter({ hasText: 'bearerAuth' });
  await bearer.locator('input[type="text"], input[type="password"]').first().fill(KEY);
  await bearer.locator('button.authorize').click();
  await dialog.locator('button.btn-done').first().click();

  const listPets = page.locator('[id="operations-Pets-list_pets"]');
  await listPets.locator('.opblock-summary-control').click();
  await listPets.locator('.try-out__btn').click();
  await listPets.locator('button.execute').click();
  const status = listPets.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 10_000 });
  assert.equal((await status.textContent()).trim(), '200');
  await listPets.locator('.opblock-summary-control').click();
});

test('the page loads nothing from anywhere but this server, and logs no errors', async () => {
  mkdirSync(SHOTS, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, 'docs.png') });
  // The three markers in view: the deprecated operation and the two stability badges.
  for (const [name, id] of [
    ['docs-deprecated.png', 'operations-Pets-get_pet'],
    ['docs-stability.png', 'operations-Store-adjust_inventory'],
  ]) {
    await page.evaluate((el) => document.getElementById(el).scrollIntoView({ block: 'center' }), id);
    await page.screenshot({ path: join(SHOTS, name) });
  }
  const foreign = requests.filter((url) => !url.startsWith(`${server.origin}/`) && !url.startsWith('data:'));
  assert.deepEqual(foreign, []);
  assert.deepEqual(problems, []);
});

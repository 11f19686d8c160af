// Scenario 3: the same screens on a remote store. Settings point the app at a spawned
// petstore-server; a pet created in the UI lands on that server (checked over its REST
// API); the key never reaches the webview; the choice survives a restart; switching back
// to Local shows the local data again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  click,
  idsWithPrefix,
  launchApp,
  localApiKey,
  navigate,
  restClient,
  saveBackend,
  sel,
  startServer,
  tempDir,
  textOf,
  type,
  waitForText,
  waitGone,
  waitVisible,
} from './helpers.js';

test('remote mode manages the remote store; local data comes back', { timeout: TEST_TIMEOUT_MS }, async () => {
  const server = await startServer('remote-mode');
  const dataDir = tempDir('petstore-e2e-data-');
  let app;
  try {
    app = await launchApp('remote-mode', { dataDir });
    let { browser } = app;

    // Something only the local store has.
    const local = restClient(app.apiPort, await localApiKey(app));
    const localPet = await local.post('/pets', { name: 'Local Lola' });
    await waitVisible(browser, sel(`pet-row-${localPet.id}`));
    await waitForText(browser, 'status-backend', /^Local database/);

    // Remote, with its address and key: Test connection says so before saving.
    await navigate(browser, 'settings');
    await click(browser, 'backend-remote');
    await type(browser, 'base-url', server.url);
    await type(browser, 'remote-key', server.key);
    await click(browser, 'test-connection');
    const report = await waitVisible(browser, sel('connection-report'));
    assert.match(report.className, /\bok\b/, `Test connection failed: ${report.text}`);
    assert.match(report.text, /Connected/);
    await click(browser, 'save-settings');
    await waitForText(browser, 'toast', /Settings saved/);
    await waitForText(browser, 'status-backend', `Remote server · ${server.url}`);
    // One state in remote mode, the sync's: the status check could disagree with it for seconds.
    await waitForText(browser, 'status-sync', 'Synced');

    // The Pets screen now shows the (empty) remote store, not the local pet.
    await navigate(browser, 'pets');
    await waitVisible(browser, sel('empty-state'));
    assert.equal(await textOf(browser, `pet-row-${localPet.id}`), null);

    // A pet created in the UI goes to the server.
    await click(browser, 'new-pet');
    await type(browser, 'pet-name', 'Remote Rex');
    await click(browser, 'save-pet');
    await waitGone(browser, sel('pet-dialog'));
    const rows = await browser.waitUntil(async () => {
      const ids = await idsWithPrefix(browser, 'pet-row-');
      return ids.length === 1 && ids;
    });
    assert.match(await textOf(browser, `pet-row-${rows[0]}`), /Remote Rex/);
    const onServer = await server.api.get('/pets?q=Remote%20Rex');
    assert.equal(onServer.length ?? onServer.items?.length, 1, `server has ${JSON.stringify(onServer)}`);
    const remotePet = (onServer.items ?? onServer)[0];
    assert.equal(remotePet.name, 'Remote Rex');
    assert.equal(remotePet.id, rows[0]);
    assert.equal(remotePet.status, 'available');
    // The local API serves the shop the window shows: in remote mode, the remote one.
    const viaLocalApi = await local.get('/pets?q=Remote%20Rex');
    assert.equal((viaLocalApi.items ?? viaLocalApi).length, 1, 'the local API serves the remote shop');

    await waitForText(browser, 'status-backend', `Remote server · ${server.url}`);
    await waitForText(browser, 'status-sync', 'Synced');

    // The key stays out of the webview: not in the page, not in any field.
    await navigate(browser, 'settings');
    await waitVisible(browser, sel('remote-key'));
    const leaks = await browser.executeScript(
      `const key = arguments[0];
       return document.documentElement.outerHTML.includes(key) ||
         [...document.querySelectorAll('input')].some((i) => i.value.includes(key));`,
      [server.key],
    );
    assert.equal(leaks, false, 'the remote key is visible to the webview');

    // Settings persist: a restart comes back in remote mode, showing the remote pet.
    await app.close();
    app = await launchApp('remote-mode-restart', { dataDir, apiPort: app.apiPort });
    browser = app.browser;
    await waitForText(browser, 'status-backend', `Remote server · ${server.url}`);
    await waitVisible(browser, sel(`pet-row-${remotePet.id}`));
    assert.match(await textOf(browser, `pet-row-${remotePet.id}`), /Remote Rex/);

    // Back to Local: the local pet is there again, the remote one is not.
    await saveBackend(browser, 'local');
    await waitForText(browser, 'status-backend', /^Local database/);
    await waitForText(browser, 'status-reachable', 'Reachable');
    await navigate(browser, 'pets');
    await waitVisible(browser, sel(`pet-row-${localPet.id}`));
    assert.match(await textOf(browser, `pet-row-${localPet.id}`), /Local Lola/);
    const shown = await idsWithPrefix(browser, 'pet-row-');
    assert.deepEqual(shown, [localPet.id]);
    // ...and the local API serves the local store again, without the remote pet.
    const localNow = await local.get('/pets?q=Remote%20Rex');
    assert.equal((localNow.items ?? localNow).length, 0, 'the remote pet never reached the local store');
  } finally {
    try {
      await app?.close();
    } finally {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
});

// Starting the real app: a failed start shows a window that says why (a database
// from a newer Petstore, a data folder that cannot be made), a second launch on the same
// data folder hands over to the first window and leaves one app, and the window's size
// survives a restart. Screenshots of the failure screens land in target/e2e/.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  APP_BIN,
  TEST_TIMEOUT_MS,
  freePort,
  isAlive,
  killApp,
  launchApp,
  screenshot,
  sel,
  tempDir,
  until,
  waitForText,
} from './helpers.js';

const FAILURE = sel('startup-failure');

async function failureShown(app) {
  const kind = await app.browser.$(FAILURE).getAttribute('data-kind');
  const message = await app.browser.$(sel('startup-failure-message')).getText();
  return { kind, message };
}

test('a database from a newer Petstore: the window says so and the file is left alone', { timeout: TEST_TIMEOUT_MS }, async () => {
  const dataDir = tempDir('petstore-e2e-newer-');
  const db = path.join(dataDir, 'petstore.db');
  const made = spawnSync('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=999"); c.commit()', db]);
  assert.equal(made.status, 0, String(made.stderr));
  const before = fs.readFileSync(db);
  const app = await launchApp('startup-newer', { dataDir, firstScreen: FAILURE });
  try {
    const { kind, message } = await failureShown(app);
    assert.equal(kind, 'newerDatabase');
    assert.match(message, /schema version 999, newer than this Petstore/);
    await screenshot(app.browser, 'startup-newer-database');
  } finally {
    await app.close();
  }
  assert.deepEqual(fs.readFileSync(db), before, 'the newer database is untouched');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a data folder that cannot be made: the window names it', { timeout: TEST_TIMEOUT_MS }, async () => {
  const parent = tempDir('petstore-e2e-blocked-');
  // A file where a folder should be: the app cannot make its data folder under it (as root,
  // permissions would not stop it).
  fs.writeFileSync(path.join(parent, 'not-a-folder'), 'x');
  const dataDir = path.join(parent, 'not-a-folder', 'shop');
  const app = await launchApp('startup-unwritable', { dataDir, firstScreen: FAILURE });
  try {
    const { kind, message } = await failureShown(app);
    assert.equal(kind, 'unwritableFolder');
    assert.ok(message.includes(dataDir), message);
    await screenshot(app.browser, 'startup-unwritable-folder');
  } finally {
    await app.close();
    fs.rmSync(parent, { recursive: true, force: true });
  }
});

test('a second launch on the same data folder hands over to the first window and exits', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('single-instance');
  try {
    const second = spawn(APP_BIN, [], {
      env: { ...process.env, PETSTORE_DATA_DIR: app.dataDir, PETSTORE_LOCAL_API_PORT: String(await freePort()) },
      stdio: 'ignore',
    });
    const exit = await new Promise((resolve) => second.once('exit', (code, signal) => resolve({ code, signal })));
    assert.deepEqual(exit, { code: 0, signal: null }, 'the second launch exits by itself');
    assert.ok(isAlive(app.appPid), 'the first app runs on');
    // The first window came forward and says why nothing new opened.
    await waitForText(app.browser, 'toast', /already open/);
    assert.equal(await app.browser.execute(() => document.visibilityState), 'visible');
  } finally {
    await app.close();
  }
});

test("the window's size survives a restart, even after a power cut", { timeout: TEST_TIMEOUT_MS }, async () => {
  const dataDir = tempDir('petstore-e2e-window-');
  const stateFile = path.join(dataDir, 'window-state.json');
  const size = (browser) => browser.execute(() => [window.outerWidth, window.outerHeight]);
  let app = await launchApp('window-state-1', { dataDir });
  try {
    await app.browser.setWindowSize(1111, 711);
    // Written once the window settles, not only at a clean exit: a till is often switched
    // off at the wall, which killApp stands for.
    await until(() => fs.existsSync(stateFile) && JSON.parse(fs.readFileSync(stateFile, 'utf8')).main?.width === 1111, {
      message: 'the window state to be written to the data folder',
    });
  } finally {
    await killApp(app);
  }
  app = await launchApp('window-state-2', { dataDir });
  try {
    assert.deepEqual(await size(app.browser), [1111, 711]);
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

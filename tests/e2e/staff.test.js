// Staff at the till, in the real app (local mode): an owner sets up staff in Settings, a
// cashier signs in with the PIN pad, sells, is refused a stock count, a manager's PIN
// overrides it on the same screen, the activity log shows both names; and the till locks
// itself when idle. Pictures of each screen at 960x600 (staff-*.png) for the guide.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  click,
  launchApp,
  localApiKey,
  navigate,
  restClient,
  screenshot,
  sel,
  textOf,
  type,
  until,
  waitForText,
  waitGone,
  waitVisible,
} from './helpers.js';

/** A picture for the guide, once the last notice has gone (it would cover the screen). */
async function picture(browser, name) {
  await waitGone(browser, sel('toast'), 15_000);
  await screenshot(browser, name);
}

/** Types a PIN on the pad the way a clerk does at the keyboard, and Enter. */
async function typePin(browser, pad, pin) {
  await type(browser, `${pad}-field`, pin);
  await browser.keys(['Enter']);
}

async function signIn(browser, id, pin) {
  await click(browser, `sign-in-${id}`);
  await typePin(browser, 'pin-pad', pin);
  await waitGone(browser, sel('sign-in'));
}

/** Adds a staff member (or changes one) in Settings' Staff panel. */
async function saveStaff(browser, opener, { name, role, pin }) {
  await click(browser, opener);
  await waitVisible(browser, sel('staff-dialog'));
  if (name) await type(browser, 'staff-name', name);
  if (role) await (await browser.$(sel('staff-role'))).selectByAttribute('value', role);
  await type(browser, 'staff-pin', pin);
  await click(browser, 'save-staff');
  await waitGone(browser, sel('staff-dialog'));
}

test('a cashier sells, is refused a count, a manager overrides, the log names both', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('staff');
  const { browser } = app;
  try {
    await browser.setWindowSize(960, 600);
    const api = restClient(app.apiPort, await localApiKey(app));
    const rex = await api.post('/pets', { name: 'Rex', price: '12.50' });
    await api.put(`/store/inventory/${rex.id}`, { quantity: 5 });

    // A shop of one PIN-less owner: no sign-in, no name in the bar, as before staff.
    assert.equal(await textOf(browser, 'status-staff'), null);

    // The owner sets their PIN, then adds a cashier and a manager.
    await navigate(browser, 'settings');
    await waitVisible(browser, sel('staff-row-1'));
    await saveStaff(browser, 'edit-staff-1', { pin: '9999' });
    await saveStaff(browser, 'add-staff', { name: 'Ana', role: 'cashier', pin: '1111' });
    await saveStaff(browser, 'add-staff', { name: 'Bea', role: 'manager', pin: '2222' });
    await waitVisible(browser, sel('staff-row-3'));
    await waitForText(browser, 'status-staff', /Owner/);
    await (await browser.$(sel('staff-panel'))).scrollIntoView();
    await picture(browser, 'staff-settings');

    // Locked: the sign-in shows the staff; Ana signs in with her PIN.
    await click(browser, 'status-lock');
    await waitVisible(browser, sel('sign-in'));
    await waitVisible(browser, sel('sign-in-2'));
    await picture(browser, 'staff-sign-in');
    await click(browser, 'sign-in-2');
    await waitVisible(browser, sel('pin-pad-field'));
    // A wrong PIN is refused by name, and the pad stays.
    await typePin(browser, 'pin-pad', '1112');
    await until(async () => ((await textOf(browser, 'error-alert')) ?? '').includes("not Ana's"), {
      timeout: 15_000,
      message: 'the wrong PIN refused',
    });
    // Tapped on the pad this time.
    for (const digit of '1111') await click(browser, `pin-pad-${digit}`);
    assert.equal((await browser.$(sel('pin-pad-field'))).getValue ? await (await browser.$(sel('pin-pad-field'))).getValue() : '1111', '1111');
    await picture(browser, 'staff-pin-pad');
    await click(browser, 'pin-pad-ok');
    await waitGone(browser, sel('sign-in'));
    await waitForText(browser, 'status-staff', 'Ana (Cashier)');

    // Ana sells Rex at the counter.
    await navigate(browser, 'pets');
    await picture(browser, 'staff-status-bar');
    await click(browser, `order-pet-${rex.id}`);
    await click(browser, 'sell-now');
    await until(async () => (await api.get(`/store/inventory/${rex.id}`)).quantity === 4, { message: 'the sale' });
    const orders = await api.get('/store/orders');
    const [sale] = Array.isArray(orders) ? orders : orders.items;
    assert.equal(sale.placedBy.staff.name, 'Ana');

    // A stock count is a manager's: refused, and Bea's PIN lets this one through.
    await navigate(browser, 'inventory');
    await click(browser, `set-stock-${rex.id}`);
    await type(browser, 'stock-quantity', '9');
    await click(browser, 'save-stock');
    await waitVisible(browser, sel('override-dialog'));
    assert.match(await textOf(browser, 'override-refused'), /Ana may not .*count_stock/);
    await click(browser, 'override-manager-3');
    await waitVisible(browser, sel('override-pin-field'));
    await picture(browser, 'staff-override');
    await typePin(browser, 'override-pin', '2222');
    await waitGone(browser, sel('override-dialog'), 15_000);
    await until(async () => (await api.get(`/store/inventory/${rex.id}`)).quantity === 9, { message: 'the count saved' });

    // Bea takes over (one click on the name, her PIN) and reads the log: both names.
    await click(browser, 'status-staff');
    await waitVisible(browser, sel('sign-in'));
    await signIn(browser, 3, '2222');
    await waitForText(browser, 'status-staff', 'Bea (Manager)');
    await navigate(browser, 'activity');
    await waitVisible(browser, sel('activity-table'));
    await waitForText(browser, 'activity-table', /Ana, approved by Bea\tStock counted/);
    const log = await textOf(browser, 'activity-table');
    assert.match(log, /Stock counted/);
    assert.match(log, /Order placed/);
    await picture(browser, 'staff-activity');
  } catch (e) {
    // The window as it was when the test failed, beside its log.
    await screenshot(browser, 'staff-failure').catch(() => {});
    throw e;
  } finally {
    await app.close();
  }
});

test('the till locks itself after the idle time', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('staff-idle');
  const { browser } = app;
  try {
    const api = restClient(app.apiPort, await localApiKey(app));
    await api.expect(200, 'PATCH', '/staff/1', { pin: '9999' });
    await api.expect(201, 'POST', '/staff', { name: 'Ana', role: 'cashier', pin: '1111' });
    // Settings reads who is serving again: the owner, still signed in, now among staff.
    await navigate(browser, 'settings');
    await waitForText(browser, 'status-staff', /Owner/);
    await type(browser, 'idle-minutes', '1');
    await click(browser, 'save-idle');
    await waitVisible(browser, sel('staff-row-2'));
    // Left alone for the minute: the sign-in covers the till, and writes are refused in Rust.
    const started = Date.now();
    await waitVisible(browser, sel('sign-in'), { timeout: 80_000 });
    assert.ok(Date.now() - started > 50_000, 'not before the idle minute');
    assert.equal(await textOf(browser, 'status-staff'), null, 'nobody named once locked');
  } finally {
    await app.close();
  }
});

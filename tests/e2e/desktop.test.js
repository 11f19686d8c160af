// A desktop app that behaves like one: the theme switch (its colours, and the
// choice surviving a restart), every keyboard shortcut, dialogs that keep the focus in
// (Shift+Tab as WebKitGTK sends it), a visible focus ring on every control Tab reaches, the
// pet picker's highlight, the focus after a sale, every screen whole at the smallest window
// (960x600, screenshots fit-<screen>-<theme>.png), and axe-core inside the real webview on
// every screen and the main dialogs in both themes: no serious or critical violation
// (every finding, of any impact, in target/e2e/axe-<theme>.txt; each dialog's picture in
// dialog-<name>-<theme>.png).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  ARTIFACTS,
  HERE,
  KEY,
  SCREENS,
  TEST_TIMEOUT_MS,
  click,
  launchApp,
  localApiKey,
  navigate,
  overflowing,
  probe,
  restClient,
  scan,
  screenshot,
  sel,
  tempDir,
  type,
  waitForText,
  waitGone,
  waitVisible,
} from './helpers.js';

const BARCODE = '4006381333931';
const AXE_SOURCE = fs.readFileSync(path.join(HERE, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

const { CONTROL, SHIFT, TAB, ENTER, ESCAPE, ARROW_DOWN } = KEY;

/** Presses keys together (the first ones held, as Ctrl+2), then lets them go. */
function press(browser, ...keys) {
  return browser.performActions([
    {
      type: 'key',
      id: 'keyboard',
      actions: [...keys.map((value) => ({ type: 'keyDown', value })), ...keys.reverse().map((value) => ({ type: 'keyUp', value }))],
    },
  ]);
}

/** The focused element: its id, testid, whether it is inside the open dialog, and its ring. */
function focused(browser) {
  return browser.executeScript(
    `const el = document.activeElement;
     if (!el || el === document.body) return { body: true };
     const style = getComputedStyle(el);
     return {
       id: el.id, testid: el.getAttribute('data-testid'), tag: el.tagName,
       label: (el.getAttribute('aria-label') || el.innerText || el.value || '').trim().slice(0, 40),
       inDialog: !!el.closest('[role="dialog"]'),
       ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
     };`,
    [],
  );
}

/** A small shop: two categories, pets in every status (one with a long name and price), stock, orders open and completed. */
async function seed(app) {
  const api = restClient(app.apiPort, await localApiKey(app));
  const dogs = await api.post('/categories', { name: 'Dogs', description: 'Puppies and adult dogs' });
  const fish = await api.post('/categories', { name: 'Fish' });
  const pets = {};
  for (const [name, categoryId, stock, price, sku] of [
    ['Rex', dogs.id, 3, '12.50', BARCODE],
    ['Bella', dogs.id, 1, '650.00', '4006381000002'],
    ['Max', dogs.id, 0, '720.00', null],
    ['Nemo', fish.id, 25, '24.90', '4006381000004'],
    // The widest a row gets: a long name, a five-digit price, a four-digit stock.
    ['Sir Reginald Fluffington-Smythe III', dogs.id, 1250, '12345.00', null],
  ]) {
    const pet = await api.post('/pets', { name, categoryId, price, sku, description: name === 'Rex' ? 'Labrador puppy' : null });
    await api.put(`/store/inventory/${pet.id}`, { quantity: stock });
    pets[name] = pet.id;
  }
  await api.expect(200, 'POST', `/store/inventory/${pets.Nemo}/adjustments`, { delta: -2, reason: 'Died in tank 3' });
  await api.post('/store/orders', { petId: pets.Bella, quantity: 1 });
  const sale = await api.post('/store/orders', { petId: pets.Nemo, quantity: 2, complete: true });
  await api.post('/store/orders', { petId: pets.Nemo, quantity: 3, customerName: 'Ana García', customerPhone: '+34 600 123 456', note: 'Collects on Saturday morning with her daughter' });
  return { api, pets, sale };
}

/** Settings › Appearance: picks a theme and waits until the page shows it. */
async function chooseTheme(browser, theme) {
  await navigate(browser, 'settings');
  await click(browser, `theme-${theme}`);
  await browser.waitUntil(async () => (await pageColours(browser)).theme === (theme === 'system' ? 'light' : theme), {
    timeout: 5_000,
    timeoutMsg: `the page did not turn ${theme}`,
  });
}

/** The page's theme and the colours of its background and text. */
function pageColours(browser) {
  return browser.executeScript(
    `const root = getComputedStyle(document.documentElement);
     const main = getComputedStyle(document.querySelector('main'));
     return { theme: document.documentElement.dataset.theme, background: root.backgroundColor, text: main.color };`,
    [],
  );
}

/** Runs axe-core in the webview on the whole document; its violations of serious or critical impact. */
async function axe(browser, where, log) {
  const injected = await browser.executeScript('return typeof window.axe === "object"', []);
  if (!injected) await browser.executeScript(`${AXE_SOURCE}\nreturn true;`, []);
  const json = await browser.executeAsyncScript(
    `const done = arguments[arguments.length - 1];
     const brief = (list) => list.map((v) => ({
       id: v.id, impact: v.impact, help: v.help,
       nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary || '' })),
     }));
     window.axe
       .run(document, { resultTypes: ['violations', 'incomplete'] })
       .then((r) => done(JSON.stringify({
         violations: brief(r.violations),
         incomplete: brief(r.incomplete.filter((v) => v.id === 'color-contrast')),
         passes: r.passes.length,
       })))
       .catch((e) => done(JSON.stringify({ error: String(e) })));`,
    [],
  );
  const result = JSON.parse(json);
  if (result.error) throw new Error(`axe on ${where}: ${result.error}`);
  const { violations, incomplete } = result;
  log.push(`${where}: ${result.passes} rules passed, ${violations.length} violated`);
  for (const v of violations) {
    log.push(`  [${v.impact}] ${v.id}: ${v.help}`);
    for (const n of v.nodes.slice(0, 5)) log.push(`    ${n.target}\n      ${n.summary.replace(/\n/g, '\n      ')}`);
  }
  // Contrast axe could not work out (text over the dialog's backdrop, say): listed to look at.
  for (const v of incomplete) {
    log.push(`  (contrast not decided on ${v.nodes.length}: ${v.nodes.slice(0, 4).map((n) => n.target).join(', ')})`);
  }
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Every screen and the main dialogs through axe, in the theme showing now. */
async function axeEverywhere(browser, theme, shop) {
  const log = [];
  const bad = [];
  const check = async (where) => {
    for (const v of await axe(browser, where, log)) bad.push(`${where}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target).join(', ')}`);
  };
  for (const screen of SCREENS) {
    await navigate(browser, screen);
    if (screen === 'pets') await waitVisible(browser, sel(`pet-row-${shop.pets.Rex}`));
    if (screen === 'orders') await waitVisible(browser, sel('tab-open'));
    if (screen === 'sales') await waitVisible(browser, sel('sales-chart'));
    if (screen === 'inventory') await waitVisible(browser, sel(`inventory-row-${shop.pets.Rex}`));
    if (screen === 'settings') await waitVisible(browser, sel('save-settings'));
    await check(`screen ${screen}`);
  }
  const dialog = async (name, open, ready) => {
    await open();
    await waitVisible(browser, ready);
    await check(`dialog ${name}`);
    await screenshot(browser, `dialog-${name.replace(/ /g, '-')}-${theme}`);
    await browser.keys([ESCAPE]);
    await waitGone(browser, '[role="dialog"]');
  };
  await navigate(browser, 'pets');
  await dialog('new pet', () => click(browser, 'new-pet'), sel('pet-name'));
  await dialog('sale', () => click(browser, `order-pet-${shop.pets.Rex}`), sel('sale-total'));
  await dialog('delete pet', () => click(browser, `delete-pet-${shop.pets.Max}`), '[role="dialog"]');
  await dialog('shortcuts', () => click(browser, 'shortcuts-help'), sel('shortcuts-dialog'));
  await navigate(browser, 'orders');
  await waitVisible(browser, sel('tab-open'));
  await dialog('cancel order', () => click(browser, `cancel-order-${shop.sale.id + 1}`), sel('confirm'));
  await click(browser, 'tab-completed');
  await dialog('receipt', () => click(browser, `receipt-${shop.sale.id}`), sel('receipt'));
  await navigate(browser, 'inventory');
  await dialog('set stock', () => click(browser, `set-stock-${shop.pets.Rex}`), sel('stock-quantity'));
  await dialog('adjust stock', () => click(browser, `adjust-stock-${shop.pets.Rex}`), sel('adjust-delta'));
  await dialog('stock history', () => click(browser, `history-${shop.pets.Nemo}`), '[role="dialog"] table');
  await navigate(browser, 'categories');
  await dialog('new category', () => click(browser, 'new-category'), sel('category-name'));
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, `axe-${theme}.txt`), `${log.join('\n')}\n`);
  assert.deepEqual(bad, [], `axe found serious or critical violations in the ${theme} theme (all in target/e2e/axe-${theme}.txt)`);
}

test('the theme: Settings switches the colours at once, and the choice survives a restart', { timeout: TEST_TIMEOUT_MS }, async () => {
  const dataDir = tempDir('petstore-e2e-theme-');
  let app = await launchApp('desktop-theme', { dataDir });
  try {
    const light = await pageColours(app.browser);
    assert.equal(light.theme, 'light', 'Xvfb has no dark setting: System is light');
    await chooseTheme(app.browser, 'dark');
    const dark = await pageColours(app.browser);
    assert.notEqual(dark.background, light.background);
    assert.notEqual(dark.text, light.text);
    await screenshot(app.browser, 'settings-dark');
    const saved = JSON.parse(fs.readFileSync(path.join(dataDir, 'settings.json'), 'utf8'));
    assert.deepEqual(saved.ui, { theme: 'dark', language: 'system' }, 'the theme saved, the language left as it was');

    await app.close();
    app = await launchApp('desktop-theme-restart', { dataDir, apiPort: app.apiPort });
    assert.deepEqual(await pageColours(app.browser), dark, 'dark again after a restart, from the first screen');
    await navigate(app.browser, 'settings');
    assert.equal((await probe(app.browser, `${sel('theme-dark')}:checked`))?.visible, true);
    await chooseTheme(app.browser, 'system');
    assert.deepEqual(await pageColours(app.browser), light);
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the keyboard: every shortcut, dialogs keep the focus, a ring on every control, the picker, after a sale', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('desktop-keys');
  const { browser } = app;
  try {
    const shop = await seed(app);
    await waitVisible(browser, sel(`pet-row-${shop.pets.Rex}`));

    // Ctrl+1…6: the screens in the menu's order.
    for (const [i, screen] of SCREENS.entries()) {
      await press(browser, CONTROL, String(i + 1));
      await waitVisible(browser, `#${screen}-title`);
    }
    // Ctrl+N from another screen: Pets, its form open.
    await press(browser, CONTROL, 'n');
    await waitVisible(browser, sel('pet-name'));
    assert.equal((await focused(browser)).testid, 'pet-name');
    await browser.keys([ESCAPE]);
    await waitGone(browser, sel('pet-name'));

    // `/`: the screen's search box; typed into a field, it is a character.
    for (const [screen, box] of [
      ['pets', 'pet-search'],
      ['orders', 'order-search'],
      ['inventory', 'inventory-search'],
    ]) {
      await navigate(browser, screen);
      await browser.executeScript('document.activeElement && document.activeElement.blur()', []);
      await browser.keys(['/']);
      await browser.waitUntil(async () => (await focused(browser)).id === box, { timeout: 3_000, timeoutMsg: `/ did not focus ${box}` });
    }
    await browser.keys(['a', '/', '?']);
    assert.equal((await probe(browser, '#inventory-search')).value, 'a/?');
    assert.equal(await probe(browser, sel('shortcuts-dialog')), null, '? typed into a field is a character');

    // `?` outside a field: the list of shortcuts; Esc closes it, and Shift+Tab and Tab stay in.
    await navigate(browser, 'pets');
    await browser.executeScript('document.activeElement && document.activeElement.blur()', []);
    await browser.keys(['?']);
    await waitVisible(browser, sel('shortcuts-dialog'));
    await browser.keys([ESCAPE]);
    await waitGone(browser, sel('shortcuts-dialog'));

    await click(browser, 'new-pet');
    await waitVisible(browser, sel('pet-name'));
    for (const keys of [[SHIFT, TAB], [TAB]]) {
      for (let i = 0; i < 14; i++) {
        await press(browser, ...keys);
        const f = await focused(browser);
        assert.ok(f.inDialog, `${keys.length === 2 ? 'Shift+Tab' : 'Tab'} #${i + 1} left the dialog: ${JSON.stringify(f)}`);
      }
    }
    await browser.keys([ESCAPE]);
    await waitGone(browser, sel('pet-name'));

    // Tab from the top of each screen reaches its controls, each with a ring.
    const noRing = [];
    for (const screen of SCREENS) {
      await navigate(browser, screen);
      await browser.executeScript('document.activeElement && document.activeElement.blur()', []);
      for (let i = 0; i < 30; i++) {
        await press(browser, TAB);
        const f = await focused(browser);
        if (!f.body && !f.ring) noRing.push({ screen, ...f });
      }
    }
    assert.deepEqual(noRing, [], 'every control Tab reaches shows a focus ring');
    await navigate(browser, 'pets');

    // The scanner still sells on Pets; after the sale the search box has the focus.
    await scan(browser, BARCODE);
    await waitForText(browser, 'sale-total', /12[.,]50/);
    await browser.keys([ENTER]);
    await waitForText(browser, 'toast', /Counter sale #\d+: 1 × Rex/);
    await browser.waitUntil(async () => (await focused(browser)).id === 'pet-search', {
      timeout: 3_000,
      timeoutMsg: 'the focus is not on the search box after a sale from a scan',
    });

    // Orders: the picker highlights the option the arrows are on; after Sell now the Pet
    // field has the focus again, for the next sale.
    await navigate(browser, 'orders');
    await type(browser, 'order-pet', 'e');
    await waitVisible(browser, '[role="option"]');
    await press(browser, ARROW_DOWN);
    const highlighted = await browser.executeScript(
      `const input = document.getElementById('order-pet');
       const option = document.getElementById(input.getAttribute('aria-activedescendant'));
       const list = option && option.closest('[role="listbox"]');
       return option && {
         focusOnField: document.activeElement === input,
         selected: option.getAttribute('aria-selected'),
         optionBg: getComputedStyle(option).backgroundColor,
         listBg: getComputedStyle(list.parentElement).backgroundColor,
         name: option.innerText,
       };`,
      [],
    );
    assert.ok(highlighted, 'ArrowDown names an option in aria-activedescendant');
    assert.equal(highlighted.focusOnField, true);
    assert.equal(highlighted.selected, 'true');
    assert.notEqual(highlighted.optionBg, highlighted.listBg, 'the highlighted option looks highlighted');
    await press(browser, ENTER);
    await waitVisible(browser, sel('order-pet-selected'));
    await screenshot(browser, 'orders-picked');
    await press(browser, ENTER);
    await waitForText(browser, 'toast', /Counter sale/);
    await browser.waitUntil(async () => (await focused(browser)).id === 'order-pet', {
      timeout: 3_000,
      timeoutMsg: 'the focus is not on the Pet field after Sell now',
    });
  } catch (e) {
    await screenshot(browser, 'desktop-keys-failure').catch(() => {});
    throw e;
  } finally {
    await app.close();
  }
});

test('every screen whole at the smallest window, 960x600, in both themes, and at the first size, 1280x800', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('desktop-fit');
  const { browser } = app;
  try {
    const shop = await seed(app);
    // The first size too: there the category sidebar leaves a table less room than the
    // window suggests (row buttons were cut off at 1,280 px with labels on).
    for (const [width, height, themes] of [[960, 600, ['light', 'dark']], [1280, 800, ['light']]]) {
      await browser.setWindowSize(width, height);
      await browser.waitUntil(async () => (await browser.executeScript('return window.innerWidth', [])) <= width, { timeout: 5_000 });
      const size = await browser.executeScript('return [window.innerWidth, window.innerHeight]', []);
      assert.ok(size[0] <= width && size[1] <= height, `the window is ${size.join('x')}`);
      for (const theme of themes) {
        await chooseTheme(browser, theme);
        for (const screen of SCREENS) {
          await navigate(browser, screen);
          if (screen === 'pets') await waitVisible(browser, sel(`pet-row-${shop.pets.Rex}`));
          if (screen === 'inventory') await waitVisible(browser, sel(`inventory-row-${shop.pets.Rex}`));
          if (screen === 'orders') await waitVisible(browser, sel(`order-row-${shop.sale.id + 1}`));
          if (screen === 'sales') await waitVisible(browser, sel('sales-chart'));
          const overflow = await overflowing(browser);
          await screenshot(browser, width === 960 ? `fit-${screen}-${theme}` : `fit-${screen}-${width}`);
          assert.deepEqual(overflow, [], `${screen} (${theme}) is wider than the ${width}x${height} window`);
        }
      }
    }
  } finally {
    await app.close();
  }
});

for (const theme of ['light', 'dark']) {
  test(`axe-core on every screen and the main dialogs, ${theme}`, { timeout: TEST_TIMEOUT_MS }, async () => {
    const app = await launchApp(`desktop-axe-${theme}`);
    const { browser } = app;
    try {
      const shop = await seed(app);
      await browser.setTimeout({ script: 60_000 });
      await chooseTheme(browser, theme);
      await axeEverywhere(browser, theme, shop);
    } finally {
      await app.close();
    }
  });
}

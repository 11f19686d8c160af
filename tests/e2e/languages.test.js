// Three languages (English, German, Spanish): in the real app, Settings › Appearance switches the whole window
// to German and to Spanish at once; every screen and the main dialogs render in it with no
// text missing (the window reports any key its language lacks) and no English word left in
// the window's own texts; every screen whole at the smallest window (960x600), where German's
// longer words would first spill; dates and money follow the language; the choice survives
// a restart. Screenshots (960x600): lang-<language>-<screen>.png and
// lang-<language>-dialog-<name>.png.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import {
  KEY,
  SCREENS,
  TEST_TIMEOUT_MS,
  choose,
  click,
  launchApp,
  localApiKey,
  navigate,
  overflowing,
  restClient,
  screenshot,
  sel,
  tempDir,
  waitVisible,
  waitGone,
} from './helpers.js';

const { ESCAPE } = KEY;

// Each language named in itself in the switch, as a clerk who cannot read the one shown finds it.
const LANGUAGES = {
  de: { option: 'Deutsch', nav: { pets: 'Tiere', orders: 'Bestellungen', settings: 'Einstellungen' }, money: '12,50 €' },
  es: { option: 'Español', nav: { pets: 'Mascotas', orders: 'Pedidos', settings: 'Ajustes' }, money: '12,50 €' },
};

// Words of the English UI that no German or Spanish screen should show. The shop's own data
// (pet and category names, a customer's note) is chosen not to contain them.
const ENGLISH = [
  'Save', 'Cancel', 'Search', 'Delete', 'Edit', 'Orders', 'Settings', 'Inventory', 'Categories',
  'Price', 'Quantity', 'Customer', 'Close', 'Complete', 'Completed', 'Available', 'Refresh',
  'Sell', 'Sale', 'Receipt', 'Print', 'History', 'Adjust', 'Description', 'Today',
  'Open', 'Cancelled', 'Loading', 'Shortcuts', 'Appearance', 'Language', 'Theme', 'Backup', 'Updates',
];

/** A small shop, its names free of English UI words. */
async function seed(app) {
  const api = restClient(app.apiPort, await localApiKey(app));
  const dogs = await api.post('/categories', { name: 'Perros' });
  const fish = await api.post('/categories', { name: 'Fische' });
  const rex = await api.post('/pets', { name: 'Rex', categoryId: dogs.id, price: '12.50', sku: '4006381333931' });
  const nemo = await api.post('/pets', { name: 'Nemo', categoryId: fish.id, price: '24.90' });
  await api.put(`/store/inventory/${rex.id}`, { quantity: 3 });
  await api.put(`/store/inventory/${nemo.id}`, { quantity: 25 });
  await api.expect(200, 'POST', `/store/inventory/${nemo.id}/adjustments`, { delta: -2, reason: 'Becken 3' });
  const sale = await api.post('/store/orders', { petId: rex.id, quantity: 1, complete: true });
  await api.post('/store/orders', { petId: nemo.id, quantity: 2, customerName: 'Ana García' });
  return { rex: rex.id, nemo: nemo.id, sale };
}

/** The keys the window looked up and did not find in its language (lib/i18n.svelte.ts). */
function missingKeys(browser) {
  return browser.executeScript('return [...(window.__petstoreMissingKeys || [])]', []);
}

/** English UI words in the window's text, with where they stand. */
function englishLeft(browser) {
  return browser.executeScript(
    `const words = new Set(arguments[0]);
     const found = [];
     const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
     const seen = (text, where) => {
       for (const w of text.split(/[^A-Za-z]+/)) if (words.has(w)) found.push(w + ' in "' + text.trim().slice(0, 60) + '" (' + where + ')');
     };
     for (let n = walker.nextNode(); n; n = walker.nextNode()) {
       const el = n.parentElement;
       if (!el || el.closest('script, style, [hidden]') || !el.getClientRects().length) continue;
       seen(n.textContent, el.tagName.toLowerCase());
     }
     for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
       if (!el.getClientRects().length) continue;
       for (const a of ['aria-label', 'title', 'placeholder']) if (el.getAttribute(a)) seen(el.getAttribute(a), a);
     }
     return found;`,
    [ENGLISH],
  );
}

/** Waits for a screen's data, so its texts are the ones it shows at rest. */
async function showScreen(browser, screen, shop) {
  await navigate(browser, screen);
  if (screen === 'pets') await waitVisible(browser, sel(`pet-row-${shop.rex}`));
  if (screen === 'orders') await waitVisible(browser, sel('tab-open'));
  if (screen === 'sales') await waitVisible(browser, sel('sales-chart'));
  if (screen === 'inventory') await waitVisible(browser, sel(`inventory-row-${shop.rex}`));
  if (screen === 'settings') await waitVisible(browser, sel('save-settings'));
}

test('German and Spanish: every screen and the main dialogs, with nothing missing and nothing left in English', { timeout: TEST_TIMEOUT_MS * 2 }, async () => {
  const dataDir = tempDir('petstore-e2e-languages-');
  let app = await launchApp('languages', { dataDir });
  const { browser } = app;
  try {
    const shop = await seed(app);
    await browser.setWindowSize(960, 600);
    await browser.waitUntil(async () => (await browser.executeScript('return window.innerWidth', [])) <= 960, { timeout: 5_000 });
    // The detector itself: in English it finds the words it looks for.
    await showScreen(browser, 'orders', shop);
    assert.ok((await englishLeft(browser)).length > 0, 'the English-word check finds nothing in English');
    for (const [language, expected] of Object.entries(LANGUAGES)) {
      await navigate(browser, 'settings');
      await choose(browser, 'language', expected.option);
      await browser.waitUntil(async () => (await browser.executeScript('return document.documentElement.lang', [])).startsWith(language), {
        timeoutMsg: `the window did not switch to ${language}`,
      });
      const problems = [];
      const look = async (where) => {
        await screenshot(browser, `lang-${language}-${where}`);
        for (const w of await englishLeft(browser)) problems.push(`${where}: ${w}`);
      };
      for (const screen of SCREENS) {
        await showScreen(browser, screen, shop);
        assert.equal((await (await browser.$(sel(`nav-${screen}`))).getText()).includes(expected.nav[screen] ?? ''), true, `nav ${screen}`);
        await look(screen);
        for (const box of await overflowing(browser)) problems.push(`${screen} is wider than 960x600: ${box}`);
      }
      const dialog = async (name, open, ready) => {
        await open();
        await waitVisible(browser, ready);
        await look(`dialog-${name}`);
        await browser.keys([ESCAPE]);
        await waitGone(browser, '[role="dialog"]');
      };
      await showScreen(browser, 'pets', shop);
      await dialog('new-pet', () => click(browser, 'new-pet'), sel('pet-name'));
      await dialog('sale', () => click(browser, `order-pet-${shop.rex}`), sel('sale-total'));
      await dialog('shortcuts', () => click(browser, 'shortcuts-help'), sel('shortcuts-dialog'));
      await showScreen(browser, 'orders', shop);
      await click(browser, 'tab-completed');
      await dialog('receipt', () => click(browser, `receipt-${shop.sale.id}`), sel('receipt'));
      await showScreen(browser, 'inventory', shop);
      await dialog('stock-history', () => click(browser, `history-${shop.nemo}`), '[role="dialog"] table');

      assert.deepEqual(await missingKeys(browser), [], `keys missing in ${language}`);
      assert.deepEqual(problems, [], `English left, or a screen cut off, in ${language}`);
      // Money in the language's way of writing it (the shop's currency is EUR).
      await showScreen(browser, 'pets', shop);
      const pets = await browser.executeScript('return document.querySelector("main").innerText', []);
      assert.ok(pets.includes(expected.money.replace(' ', '\u00a0')) || pets.includes(expected.money), `${language} money: ${pets.slice(0, 400)}`);
    }

    // The choice (Spanish, the last one) is kept: a restart opens in it.
    await app.close();
    app = await launchApp('languages-restart', { dataDir, apiPort: app.apiPort });
    const nav = await (await app.browser.$(sel('nav-orders'))).getText();
    assert.ok(nav.includes('Pedidos'), `after a restart the nav reads ${nav}`);
    assert.equal(await app.browser.executeScript('return document.documentElement.lang', []), 'es');
    // Back to the system's language: English on this machine (LANG=C).
    await navigate(app.browser, 'settings');
    await choose(app.browser, 'language', 'Sistema (English)');
    await app.browser.waitUntil(async () => (await (await app.browser.$(sel('nav-orders'))).getText()).includes('Orders'), {
      timeoutMsg: 'the window did not go back to English',
    });
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

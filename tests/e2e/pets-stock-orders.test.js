// Scenario 1: the day's work through the UI only. A category and a pet, stock 2, two orders,
// one completed and one cancelled; after each step the status and stock the screens show
// follow docs/ARCHITECTURE.md, "Pet status and stock rules".
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  click,
  choose,
  idsWithPrefix,
  launchApp,
  navigate,
  sel,
  textOf,
  type,
  waitForText,
  waitGone,
  waitVisible,
} from './helpers.js';

/** What Inventory and Pets show for the pet: the stock and the status in both tables. */
async function expectPet(browser, petId, { stock, status }, step) {
  await navigate(browser, 'inventory');
  await waitVisible(browser, sel(`inventory-row-${petId}`));
  await waitForText(browser, `quantity-${petId}`, String(stock)).catch((e) => {
    throw new Error(`${step}: Inventory stock: ${e.message}`);
  });
  await waitForText(browser, `status-${petId}`, status).catch((e) => {
    throw new Error(`${step}: Inventory status: ${e.message}`);
  });
  await navigate(browser, 'pets');
  await waitVisible(browser, sel(`pet-row-${petId}`));
  await waitForText(browser, `status-${petId}`, status).catch((e) => {
    throw new Error(`${step}: Pets status: ${e.message}`);
  });
}

/** Places an order of `quantity` for the pet on the Orders screen; returns the new order's id. */
async function placeOrder(browser, pet, quantity) {
  await navigate(browser, 'orders');
  await waitVisible(browser, sel('tab-open'));
  await click(browser, 'tab-open');
  const before = await idsWithPrefix(browser, 'order-row-');
  await type(browser, 'order-pet', pet.name);
  await click(browser, `pet-option-${pet.id}`);
  // The chosen pet is confirmed on screen, by name and id (in whatever order the UI puts them).
  await waitForText(
    browser,
    'order-pet-selected',
    new RegExp(`(?=.*\\b${pet.name}\\b)(?=.*#${pet.id}\\b)`),
  );
  await type(browser, 'order-quantity', quantity);
  await click(browser, 'place-order');
  await waitForText(browser, 'toast', new RegExp(`Order #\\d+ placed: ${quantity} × ${pet.name}`));
  let ids = [];
  await browser.waitUntil(
    async () => {
      ids = (await idsWithPrefix(browser, 'order-row-')).filter((id) => !before.includes(id));
      return ids.length === 1;
    },
    { timeout: 10_000, timeoutMsg: 'the new order did not appear in the open orders' },
  );
  const [orderId] = ids;
  assert.match(await textOf(browser, `order-row-${orderId}`), new RegExp(`${pet.name}\\s+${quantity}\\b`));
  return orderId;
}

test('pets, stock and orders follow the status rules', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('pets-stock-orders');
  const { browser } = app;
  try {
    // A category, on the Categories screen.
    await navigate(browser, 'categories');
    await click(browser, 'new-category');
    await type(browser, 'category-name', 'Dogs');
    await click(browser, 'save-category');
    await waitGone(browser, sel('category-dialog'));
    const [categoryId] = await browser.waitUntil(async () => {
      const ids = await idsWithPrefix(browser, 'category-row-');
      return ids.length === 1 && ids;
    });
    assert.match(await textOf(browser, `category-row-${categoryId}`), /^Dogs\b/);

    // A pet in that category, on the Pets screen; a new pet is available.
    await navigate(browser, 'pets');
    await click(browser, 'new-pet');
    await type(browser, 'pet-name', 'Rex');
    await choose(browser, 'pet-category', 'Dogs');
    await click(browser, 'save-pet');
    await waitGone(browser, sel('pet-dialog'));
    const [petId] = await browser.waitUntil(async () => {
      const ids = await idsWithPrefix(browser, 'pet-row-');
      return ids.length === 1 && ids;
    });
    const pet = { id: petId, name: 'Rex' };
    assert.match(await textOf(browser, `pet-row-${petId}`), /Rex\s+Dogs\s+available/);
    await expectPet(browser, petId, { stock: 0, status: 'available' }, 'new pet');

    // Stock 2 on the Inventory screen.
    await navigate(browser, 'inventory');
    await click(browser, `set-stock-${petId}`);
    await type(browser, 'stock-quantity', 2);
    await click(browser, 'save-stock');
    await waitGone(browser, sel('set-stock-dialog'));
    await expectPet(browser, petId, { stock: 2, status: 'available' }, 'stock set to 2');

    // First order of 1: the stock is reserved at once; still available with 1 left.
    const first = await placeOrder(browser, pet, 1);
    await expectPet(browser, petId, { stock: 1, status: 'available' }, 'first order placed');

    // Second order of 1: stock 0 with open orders, so pending.
    const second = await placeOrder(browser, pet, 1);
    assert.notEqual(first, second);
    await expectPet(browser, petId, { stock: 0, status: 'pending' }, 'second order placed');

    // Completing one: the other is still open, so the pet stays pending.
    await navigate(browser, 'orders');
    await click(browser, 'tab-open');
    await click(browser, `complete-order-${first}`);
    await waitForText(browser, 'toast', new RegExp(`Order #${first} completed`));
    await waitGone(browser, sel(`order-row-${first}`));
    await click(browser, 'tab-completed');
    await waitVisible(browser, sel(`order-row-${first}`));
    await expectPet(browser, petId, { stock: 0, status: 'pending' }, 'first order completed');

    // Cancelling the other: its 1 comes back, and a pending pet with stock becomes available.
    await navigate(browser, 'orders');
    await click(browser, 'tab-open');
    await click(browser, `cancel-order-${second}`);
    await click(browser, 'confirm');
    await waitForText(browser, 'toast', new RegExp(`Order #${second} cancelled`));
    await waitGone(browser, sel(`order-row-${second}`));
    await expectPet(browser, petId, { stock: 1, status: 'available' }, 'second order cancelled');
  } finally {
    await app.close();
  }
});

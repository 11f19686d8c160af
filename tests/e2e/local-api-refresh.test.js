// Scenario 2: another program changes the data through the app's local REST API; the open
// Pets screen shows the change by itself (the app emits "petstore://changed"), no click.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  TEST_TIMEOUT_MS,
  launchApp,
  localApiKey,
  navigate,
  restClient,
  sel,
  textOf,
  waitForText,
  waitVisible,
} from './helpers.js';

test('a pet created through the local API appears in the open window', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('local-api-refresh');
  const { browser } = app;
  try {
    const api = restClient(app.apiPort, await localApiKey(app));
    // The status bar names the address other programs use.
    await waitForText(browser, 'status-local-api', `Local API · http://127.0.0.1:${app.apiPort}`);
    await waitVisible(browser, sel('empty-state'));

    const pet = await api.post('/pets', { name: 'Biscuit' });
    assert.equal(pet.status, 'available');
    const item = await api.put(`/store/inventory/${pet.id}`, { quantity: 3 });
    assert.equal(item.quantity, 3);

    // No click from here on: the Pets screen refreshes on the event.
    await waitVisible(browser, sel(`pet-row-${pet.id}`), { timeout: 5_000 });
    await waitForText(browser, `status-${pet.id}`, 'available');
    assert.match(await textOf(browser, `pet-row-${pet.id}`), /Biscuit/);

    // A status change made elsewhere shows too: stock 0 with no open orders makes it sold.
    await api.put(`/store/inventory/${pet.id}`, { quantity: 0 });
    await waitForText(browser, `status-${pet.id}`, 'sold', 5_000);

    // And the stock set through the API is what Inventory shows.
    await api.put(`/store/inventory/${pet.id}`, { quantity: 3 });
    await navigate(browser, 'inventory');
    await waitForText(browser, `quantity-${pet.id}`, '3');
    await waitForText(browser, `status-${pet.id}`, 'available');
  } finally {
    await app.close();
  }
});

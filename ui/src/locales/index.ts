// Every string of the UI, by language. English is the source: its files define the keys,
// and each other language must have every one of them, which the type below checks at build
// time (svelte-check) and tests/i18n.test.ts checks again for plural forms and {{values}}.
// One file per area of the app, so the screens' texts are found, reviewed and translated
// together.
import type { Language } from '../lib/bindings/Language';

import deApp from './de/app.json';
import deCategories from './de/categories.json';
import deCommon from './de/common.json';
import deErrors from './de/errors.json';
import deInventory from './de/inventory.json';
import deOrders from './de/orders.json';
import dePets from './de/pets.json';
import deSales from './de/sales.json';
import deSettings from './de/settings.json';
import deStaff from './de/staff.json';
import deStartup from './de/startup.json';
import enApp from './en/app.json';
import enCategories from './en/categories.json';
import enCommon from './en/common.json';
import enErrors from './en/errors.json';
import enInventory from './en/inventory.json';
import enOrders from './en/orders.json';
import enPets from './en/pets.json';
import enSales from './en/sales.json';
import enSettings from './en/settings.json';
import enStaff from './en/staff.json';
import enStartup from './en/startup.json';
import esApp from './es/app.json';
import esCategories from './es/categories.json';
import esCommon from './es/common.json';
import esErrors from './es/errors.json';
import esInventory from './es/inventory.json';
import esOrders from './es/orders.json';
import esPets from './es/pets.json';
import esSales from './es/sales.json';
import esSettings from './es/settings.json';
import esStaff from './es/staff.json';
import esStartup from './es/startup.json';

const en = {
  common: enCommon,
  app: enApp,
  pets: enPets,
  orders: enOrders,
  sales: enSales,
  inventory: enInventory,
  categories: enCategories,
  settings: enSettings,
  startup: enStartup,
  staff: enStaff,
  errors: enErrors,
};

/** The shape of every language's texts: English's. */
export type Messages = typeof en;

const de: Messages = {
  common: deCommon,
  app: deApp,
  pets: dePets,
  orders: deOrders,
  sales: deSales,
  inventory: deInventory,
  categories: deCategories,
  settings: deSettings,
  startup: deStartup,
  staff: deStaff,
  errors: deErrors,
};

const es: Messages = {
  common: esCommon,
  app: esApp,
  pets: esPets,
  orders: esOrders,
  sales: esSales,
  inventory: esInventory,
  categories: esCategories,
  settings: esSettings,
  startup: esStartup,
  staff: esStaff,
  errors: esErrors,
};

export const MESSAGES: Record<Language, Messages> = { en, de, es };

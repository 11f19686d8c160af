// The keys of `t` (lib/i18n.svelte.ts) are English's, typed: a key that does not exist,
// or a plural used without `count`, fails svelte-check.
import 'i18next';

import type { Messages } from './locales';

declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'translation';
    resources: { translation: Messages };
    returnNull: false;
  }
}

import '@testing-library/jest-dom/vitest';

import { clearMocks } from '@tauri-apps/api/mocks';
import { afterEach } from 'vitest';

import { toast } from '../src/lib/toast.svelte';

// The Tauri mocks register callbacks with ids from crypto.getRandomValues.
if (!window.crypto?.getRandomValues) {
  Object.defineProperty(window, 'crypto', { value: globalThis.crypto });
}

afterEach(() => {
  clearMocks();
  toast.dismiss();
  window.location.hash = '';
});

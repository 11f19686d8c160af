import { mount } from 'svelte';

import App from './App.svelte';
import { startupFailure } from './lib/api';
import { followMenu } from './lib/menu';
import { i18n } from './lib/i18n.svelte';
import { readPreferences } from './lib/preferences';
import { theme } from './lib/theme.svelte';
import './styles/app.css';

async function start() {
  // Only `vite --mode mock` / `vite build --mode mock` ship the in-memory fake backend, for
  // looking at the UI in a plain browser. In a production build MODE is "production", this
  // branch is dropped, and the fake is not in the bundle.
  if (import.meta.env.MODE === 'mock') {
    const { installFakeBackend } = await import('./dev/fakeBackend');
    installFakeBackend();
  }
  // The saved theme and language before the first paint of a screen, so a dark till never
  // flashes white nor a German one English (after a failed start there are none saved to
  // read: the system's).
  const saved = await readPreferences();
  theme.apply(saved.theme);
  i18n.apply(saved.language);
  const target = document.getElementById('app')!;
  // A failed start shows why instead of the shop (src-tauri/src/startup.rs).
  const failure = await startupFailure();
  if (failure) {
    const { default: StartupFailureScreen } = await import('./screens/startup/StartupFailureScreen.svelte');
    mount(StartupFailureScreen, { target, props: { failure } });
  } else {
    mount(App, { target });
    // The macOS menu bar's entries (src-tauri/src/menu.rs); elsewhere none are sent.
    void followMenu();
  }
}

void start();

import { mount } from 'svelte';

import App from './App.svelte';
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
  // The saved theme before the first paint of a screen, so a dark till never flashes white.
  await theme.load();
  mount(App, { target: document.getElementById('app')! });
}

void start();

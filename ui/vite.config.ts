import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';
import { defineConfig } from 'vitest/config';

// `--mode mock` (npm run dev:mock / build:mock) swaps the Tauri backend for an in-memory
// fake so the UI can be looked at in a plain browser. The production build never contains
// it: main.ts only imports the fake when MODE is "mock", and Vite drops that branch.
export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  // Tauri's dev runner expects a fixed port and shows the terminal output as is.
  clearScreen: false,
  server: { host: '127.0.0.1', port: 5173, strictPort: true },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One small app; no need for a chunk-size warning or source maps in the shipped bundle.
    sourcemap: false,
  },
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.ts'],
    setupFiles: ['tests/setup.ts'],
    globals: true,
    restoreMocks: true,
  },
});

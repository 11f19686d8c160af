import { defineConfig } from 'vite';

// The API reference page (docs/), built apart from the app into dist-docs/, which the
// `petstore` crate embeds and serves at /docs. File names are fixed (no content hashes):
// the server embeds whatever is there, and the page is only ever served by the binary
// that carries it, so there is no stale cache to bust.
export default defineConfig({
  root: 'docs',
  base: '/docs/',
  build: {
    outDir: '../dist-docs',
    emptyOutDir: true,
    sourcemap: false,
    // Swagger UI is one big bundle; that is expected.
    chunkSizeWarningLimit: 2048,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/[name].js',
        chunkFileNames: 'assets/[name].js',
        assetFileNames: 'assets/[name][extname]',
      },
    },
  },
});

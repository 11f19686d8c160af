import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  // TypeScript in <script lang="ts"> blocks.
  preprocess: vitePreprocess(),
  compilerOptions: {
    // Runes everywhere: no legacy `export let` or `$:` can slip in.
    runes: true,
  },
};

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The admin console (docs/console.md): built into dist/console and served by the service at
// `console.path` (settings). The base must be that path: CONSOLE_BASE when it is not /console.
const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: (process.env.CONSOLE_BASE ?? '/console').replace(/\/?$/, '/'),
  // Preact's automatic JSX runtime, through Vite 8's Oxc transformer (no preset plugin needed).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // Hashed names (Vite's default, spelled out): the service serves /assets/* as immutable.
    rollupOptions: { output: { entryFileNames: 'assets/[name]-[hash].js', chunkFileNames: 'assets/[name]-[hash].js', assetFileNames: 'assets/[name]-[hash][extname]' } },
  },
});

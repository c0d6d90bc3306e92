import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The admin console (docs/console.md): built into dist/console and served by the service at
// `console.path` (settings). The base must be that path: CONSOLE_BASE when it is not /console.
const here = fileURLToPath(new URL('.', import.meta.url));
// The SDK packages from their sources (their package.json exports ./dist, which a fresh clone
// has not built when the console builds), as examples/web does.
const source = (name: string) => fileURLToPath(new URL(`../packages/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  root: here,
  base: (process.env.CONSOLE_BASE ?? '/console').replace(/\/?$/, '/'),
  resolve: {
    alias: [
      { find: '@svc/client', replacement: source('client') },
      { find: '@svc/react', replacement: source('react') },
      // @svc/react's building blocks are written for React: Preact's compat layer runs them.
      { find: /^react(-dom)?$/, replacement: 'preact/compat' },
      { find: /^react\/jsx-(dev-)?runtime$/, replacement: 'preact/jsx-runtime' },
    ],
  },
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

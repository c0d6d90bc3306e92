import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web example (examples/web/README.md): the SDK packages from their sources, so nothing needs
// building first.
const here = fileURLToPath(new URL('.', import.meta.url));
const source = (name: string) => fileURLToPath(new URL(`../../packages/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  root: here,
  resolve: { alias: { '@svc/client': source('client'), '@svc/react': source('react') } },
  // React's automatic JSX runtime, through Vite 8's Oxc transformer (no preset plugin needed).
  oxc: { jsx: { runtime: 'automatic' } },
  // A loopback address: the service's `cors.allowedOrigins` lists this origin (README).
  server: { host: 'localhost', port: 5173, strictPort: true },
  preview: { host: 'localhost', port: 5173, strictPort: true },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  logLevel: 'warn',
});

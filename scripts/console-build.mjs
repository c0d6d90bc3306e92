// Builds the admin console (console/ → dist/console) when its sources changed since the last
// build: `npm run build` and `npm start` call it, and an unchanged console costs one hash of a few
// small files (tens of ms) rather than a Vite build. `--force` builds regardless.
// Plain JS, not TypeScript: it runs before every start and must not pay for a transpiler.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const consoleDir = join(root, 'console');
const outDir = join(root, 'dist', 'console');
const stampFile = join(outDir, '.sources-hash');

// What the built files depend on: every file under console/ (sources, the generated API types,
// the Vite config) and the sources of the SDK packages it bundles (@svc/client, @svc/react), the
// versions of the build tools and of what is bundled, and CONSOLE_BASE.
function sourcesHash() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else hash.update(relative(root, full)).update('\0').update(readFileSync(full)).update('\0');
    }
  };
  walk(consoleDir);
  for (const sdk of ['client', 'react']) walk(join(root, 'packages', sdk, 'src'));
  for (const pkg of ['vite', 'preact', 'openapi-fetch', '@simplewebauthn/browser', 'socket.io-client', 'eventsource-parser']) {
    hash.update(pkg).update(JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version);
  }
  hash.update(process.env.CONSOLE_BASE ?? '');
  return hash.digest('hex');
}

const force = process.argv.includes('--force');
const wanted = sourcesHash();
const current = existsSync(stampFile) && existsSync(join(outDir, 'index.html')) ? readFileSync(stampFile, 'utf8').trim() : '';
if (!force && current === wanted) process.exit(0);

const started = performance.now();
const { build } = await import('vite');
await build({ configFile: join(consoleDir, 'vite.config.ts'), logLevel: 'warn' });
writeFileSync(stampFile, wanted + '\n');
process.stdout.write(`console built into dist/console in ${Math.round(performance.now() - started)} ms\n`);

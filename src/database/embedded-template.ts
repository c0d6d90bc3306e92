import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The embedded database's first boot starts from a data directory made at build time (`npm run
// build`, `npm start`) instead of running initdb inside PGlite, which costs ~15 s and ~800 MB at
// its peak; reopening it afterwards costs what reopening any data directory does. Named by
// PGlite's version: an upgrade makes a new one. Without it (a test run, no build), the first boot
// runs initdb as before.
const PGLITE_VERSION = pgliteVersion();
// dist/src/database → dist/
const BUILD_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// The package does not export its package.json: found from its entry point.
function pgliteVersion(): string {
  for (let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
    if (pkg.name === '@electric-sql/pglite') return pkg.version;
  }
  throw new Error('@electric-sql/pglite: package.json not found');
}

// Where the build writes it; run from the sources (tests), the build's copy under dist/ if made.
export function templatePath(dir = BUILD_DIR): string {
  const name = `pglite-${PGLITE_VERSION}-initdb.tar.gz`;
  const built = join(dir, 'dist', name);
  return !existsSync(join(dir, name)) && existsSync(built) ? built : join(dir, name);
}

export function loadTemplate(path = templatePath()): Blob | undefined {
  return existsSync(path) ? new Blob([readFileSync(path)]) : undefined;
}

// Writes the template once; a later build keeps it.
export async function prepareTemplate(path = templatePath()): Promise<boolean> {
  if (existsSync(path)) return false;
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create();
  try {
    const dump = await db.dumpDataDir('gzip');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.tmp`, Buffer.from(await dump.arrayBuffer()));
    renameSync(`${path}.tmp`, path);
    return true;
  } finally {
    await db.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const made = await prepareTemplate();
  process.stdout.write(`${made ? 'prepared' : 'kept'} the embedded database template ${templatePath()}\n`);
}

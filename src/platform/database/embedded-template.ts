import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The embedded database's first boot starts from a data directory made at build time (`npm run
// build`, `npm start`) instead of running initdb inside PGlite, which costs ~15 s and ~800 MB at
// its peak. It holds the schema too (every migration applied), so a first boot only seeds. The
// build writes it twice: as a folder, which a first boot on disk copies (~0.2 s) and then opens as
// any later boot does, and as PGlite's archive (dumpDataDir), which an in-memory database loads
// (unpacking it into a folder through PGlite costs ~1 s). Named by PGlite's version and by the
// migrations it holds: an upgrade or a new migration makes a new one. Without it (a test run, no
// build), the first boot runs initdb and the migrations as before.
const PGLITE_VERSION = pgliteVersion();
const HERE = dirname(fileURLToPath(import.meta.url));
// dist/src/platform/database → dist/
const BUILD_DIR = resolve(HERE, '../../..');

// The migrations by file name ("1763800000000-init"): the same from the sources and the build, and
// never edited once released, so the names tell which schema a template holds.
function schemaFingerprint(): string {
  const names = readdirSync(join(HERE, 'migrations'))
    .filter((f) => /^\d+-[\w-]+\.[jt]s$/.test(f))
    .map((f) => f.slice(0, -3))
    .sort();
  return createHash('sha256').update(names.join('\n')).digest('hex').slice(0, 12);
}

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
  return `${templateBase(dir)}.tar.gz`;
}

// The folder form, when the build made it and this user may read it.
export function templateDirectory(dir = BUILD_DIR): string | undefined {
  const folder = templateBase(dir);
  try {
    accessSync(join(folder, 'PG_VERSION'), constants.R_OK);
    return folder;
  } catch {
    return undefined;
  }
}

// Read once: the migrations do not change while a process runs.
let templateName: string | undefined;

function templateBase(dir: string): string {
  const name = (templateName ??= `pglite-${PGLITE_VERSION}-schema-${schemaFingerprint()}`);
  const built = join(dir, 'dist', name);
  return !existsSync(`${join(dir, name)}.tar.gz`) && existsSync(`${built}.tar.gz`) ? built : join(dir, name);
}

export function loadTemplate(path = templatePath()): Blob | undefined {
  return existsSync(path) ? new Blob([readFileSync(path)]) : undefined;
}

// Writes the template once (a later build keeps it) and removes the ones it replaces: initdb, then
// the migrations over the wire protocol as the service runs them, then both forms.
export async function prepareTemplate(path = templatePath()): Promise<boolean> {
  const folder = path.slice(0, -'.tar.gz'.length);
  if (existsSync(path) && existsSync(join(folder, 'PG_VERSION'))) return false;
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions } = await import('./data-source-options.js');
  const { runMigrations } = await import('./migrate.js');
  const db = await PGlite.create();
  let dump: Blob;
  try {
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
    await server.start();
    const dataSource = new DataSource(dataSourceOptions(`postgres://postgres@${server.getServerConn()}/postgres`, [], undefined, 1));
    try {
      await dataSource.initialize();
      await runMigrations(dataSource);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
      await server.stop();
    }
    dump = await db.dumpDataDir('gzip');
  } finally {
    await db.close();
  }
  mkdirSync(dirname(path), { recursive: true });
  const unpacked = `${folder}.tmp`;
  rmSync(unpacked, { recursive: true, force: true });
  const onDisk = await PGlite.create(unpacked, { loadDataDir: dump });
  await onDisk.close();
  rmSync(folder, { recursive: true, force: true });
  renameSync(unpacked, folder);
  writeFileSync(`${path}.tmp`, Buffer.from(await dump.arrayBuffer()));
  renameSync(`${path}.tmp`, path);
  for (const old of readdirSync(dirname(path))) {
    if (/^pglite-/.test(old) && old !== basename(path) && old !== basename(folder)) rmSync(join(dirname(path), old), { recursive: true, force: true });
  }
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const made = await prepareTemplate();
  process.stdout.write(`${made ? 'prepared' : 'kept'} the embedded database template ${templatePath()}\n`);
}

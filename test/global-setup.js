// One embedded database for the whole run (a fresh PGlite costs ~3 s), shared by every test
// file through TEST_DATABASE_URL; tests isolate themselves with fresh stores. With DATABASE_URL
// set, the suites run against that PostgreSQL instead. Plain JS: Jest loads this file before
// any transform or module mapping applies.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// The service's own exchange-keeping queue (src/platform/database/exchange-queue.ts), transpiled here:
// the run's apps and workers share this server, as the service's connections share its own.
async function loadExchangeQueue() {
  const source = readFileSync(join(root, 'src/platform/database/exchange-queue.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const out = join(root, 'node_modules/.cache/svc-test/exchange-queue.mjs');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, outputText);
  return (await import(pathToFileURL(out).href)).ExchangeQueue;
}

// The embedded database's empty data directory, when a build has made it (see
// src/platform/database/embedded-template.ts): loading it skips initdb.
function builtTemplate() {
  const dist = join(root, 'dist');
  if (!existsSync(dist)) return undefined;
  // the newest, should an older PGlite's be left beside it
  const [newest] = readdirSync(dist)
    .filter((f) => /^pglite-.*\.tar\.gz$/.test(f))
    .map((f) => join(dist, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return newest ? new Blob([readFileSync(newest)]) : undefined;
}

export default async function globalSetup() {
  if (process.env.DATABASE_URL) return;
  const db = await PGlite.create({ loadDataDir: builtTemplate() });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 128 });
  const ExchangeQueue = await loadExchangeQueue();
  server.queryQueue = new ExchangeQueue(db);
  await server.start();
  process.env.TEST_DATABASE_URL = `postgres://postgres@${server.getServerConn()}/postgres`;
  globalThis.__embeddedDb = { db, server };
}

// The embedded database's own thread: PGlite (PostgreSQL compiled to WASM) runs here, so its
// work (a query, a checkpoint, opening the data directory at boot) never holds the service's
// event loop. The main thread serves the wire protocol (embedded-postgres.ts) and hands each
// message here; plain JavaScript, so that the sources' tests and the build start the same file.
import { cpSync, renameSync, rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

// `copyFrom`: the template's folder, copied to the new data directory (whole or not at all: a copy
// cut short is never taken for a data directory); `template`: an archive PGlite unpacks.
const { dataDir, template, copyFrom } = workerData;
const options = { loadDataDir: template ? new Blob([template]) : undefined };
let db;
try {
  if (copyFrom) {
    const partial = `${dataDir}.copying`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(copyFrom, partial, { recursive: true });
    renameSync(partial, dataDir);
  }
  db = dataDir ? await PGlite.create(dataDir, options) : await PGlite.create(options);
} catch (error) {
  parentPort.postMessage({ error: String(error?.stack ?? error) });
  process.exit(1);
}
parentPort.postMessage({ ready: true });

// Requests run one after another, in the order sent. One without an `id` expects no answer yet:
// its output (copied: PGlite's views of its memory are reused) waits for the next one with an id.
let output = [];
let failure;
let previous = Promise.resolve();
parentPort.on('message', (request) => {
  previous = previous.then(() => run(request));
});

async function run({ id, op, message, sql }) {
  try {
    if (op === 'protocol') await db.execProtocolRawStream(message, { onRawData: (data) => output.push(data.slice()) });
    else if (op === 'exec') await db.exec(sql);
    else if (op === 'close') await db.close();
  } catch (error) {
    failure ??= error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
  }
  if (id === undefined) return;
  const chunks = output;
  const error = failure;
  output = [];
  failure = undefined;
  if (error) parentPort.postMessage({ id, error });
  else parentPort.postMessage({ id, chunks, inTransaction: op === 'close' ? false : db.isInTransaction() }, chunks.map((c) => c.buffer));
}

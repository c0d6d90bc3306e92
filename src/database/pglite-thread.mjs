// The embedded database's own thread: PGlite (PostgreSQL compiled to WASM) runs here, so its
// work (a query, a checkpoint, opening the data directory at boot) never holds the service's
// event loop. The main thread serves the wire protocol (embedded-postgres.ts) and hands each
// message here; plain JavaScript, so that the sources' tests and the build start the same file.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const { dataDir, template } = workerData;
const options = { loadDataDir: template ? new Blob([template]) : undefined };
let db;
try {
  db = dataDir ? await PGlite.create(dataDir, options) : await PGlite.create(options);
} catch (error) {
  parentPort.postMessage({ error: String(error?.stack ?? error) });
  process.exit(1);
}
parentPort.postMessage({ ready: true });

// One request at a time: the main thread's queue keeps the session's exchanges apart.
parentPort.on('message', async ({ id, op, message, sql }) => {
  try {
    if (op === 'close') {
      await db.close();
      parentPort.postMessage({ id });
      return;
    }
    const chunks = [];
    if (op === 'protocol') {
      // The chunks are views of PGlite's memory: copied before the next query reuses it.
      await db.execProtocolRawStream(message, { onRawData: (data) => chunks.push(data.slice()) });
    } else {
      await db.exec(sql);
    }
    parentPort.postMessage({ id, chunks, inTransaction: db.isInTransaction() }, chunks.map((c) => c.buffer));
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) } });
  }
});

// One embedded database for the whole run (a fresh PGlite costs ~3 s), shared by every test
// file through TEST_DATABASE_URL; tests isolate themselves with fresh stores. With DATABASE_URL
// set, the suites run against that PostgreSQL instead. Plain JS: Jest loads this file before
// any transform or module mapping applies.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export default async function globalSetup() {
  if (process.env.DATABASE_URL) return;
  const db = await PGlite.create();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 128 });
  await server.start();
  process.env.TEST_DATABASE_URL = `postgres://postgres@${server.getServerConn()}/postgres`;
  globalThis.__embeddedDb = { db, server };
}

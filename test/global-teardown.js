export default async function globalTeardown() {
  const embedded = globalThis.__embeddedDb;
  if (!embedded) return;
  await embedded.server.stop();
  await embedded.db.close();
}

import type { EarlyStart } from './app.js';
import { ServiceConfig } from './settings.js';
import { ConfigError } from './platform/config/env.js';
import { EmbeddedPostgres } from './platform/database/embedded-postgres.js';
import type { ComposedExtensions } from './extensions.js';

// The configuration first (a bad key stops the boot before anything starts), then the embedded
// database on its thread, then the application's modules: loading them takes as long as opening
// the database, and the two overlap.
// Extensions (SERVICE_EXTENSIONS) come before the configuration, which checks their settings.
function startEarly(composed: ComposedExtensions): EarlyStart {
  const config = ServiceConfig.load({ sections: composed.sections });
  const embedded = EmbeddedPostgres.forConfig(config);
  embedded.catch(() => undefined); // awaited by createApp; a failure is reported there
  return { config, embedded, composed };
}

async function main(): Promise<void> {
  // Loaded only when named: without extensions the boot imports none of their machinery.
  const named = process.env.SERVICE_EXTENSIONS?.trim();
  const composed: ComposedExtensions = named ? await (await import('./extensions.js')).loadAndCompose(named) : { sections: [], auditActions: {}, added: {} };
  const early = startEarly(composed);
  const { bootstrap } = await import('./bootstrap.js');
  await bootstrap({}, early);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});

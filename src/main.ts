import type { EarlyStart } from './app.js';
import { releaseBootMemory } from './platform/logging/boot-memory.js';
import { ServiceConfig } from './settings.js';
import { ConfigError } from './platform/config/env.js';
import { serviceUrl } from './platform/config/service-url.js';
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
  const started = performance.now();
  // Loaded only when named: without extensions the boot imports none of their machinery.
  const named = process.env.SERVICE_EXTENSIONS?.trim();
  const composed: ComposedExtensions = named ? await (await import('./extensions.js')).loadAndCompose(named) : { sections: [], auditActions: {}, added: {} };
  const early = startEarly(composed);
  const { createApp } = await import('./app.js');
  const { app, config, close, consolePath } = await createApp({}, early);
  await releaseBootMemory();
  await app.listen(config.env.PORT, config.env.HOST);
  // nestjs-pino takes a call's last string for its context: the message comes before it.
  const { Logger, PinoLogger } = await import('nestjs-pino');
  const { writePlainLine } = await import('./platform/logging/logging.js');
  const logger = app.get(Logger);
  const CONTEXT = 'Main';
  const { port } = app.getHttpServer().address() as { port: number };
  const url = serviceUrl(config.env, port);
  logger.log(
    { port, url, database: config.embeddedDatabase ? 'embedded' : 'postgres', redis: !!config.env.REDIS_URL, startupMs: Math.round(performance.now() - started) },
    'service listening',
    CONTEXT,
  );
  // One plain line for whoever started it by hand, the last of the start: where to go. The
  // console only when it is served (on and built), the docs only when they are (off in
  // production unless DOCS_ENABLED).
  const links = [consolePath && `admin console: ${url}${consolePath}`, config.docsEnabled && `API docs: ${url}/docs`].filter(Boolean);
  writePlainLine(PinoLogger.root, `${config.env.PROJECT_CODENAME}-${config.env.SERVICE_CODENAME} ${config.env.APP_VERSION} listening on ${url}${links.length ? ` (${links.join(', ')})` : ''}`);

  // Graceful shutdown: stop accepting, finish in-flight requests, close pools and the database.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log({ signal }, 'shutting down', CONTEXT);
    await close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});

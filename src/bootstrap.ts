import { Logger, PinoLogger } from 'nestjs-pino';
import { createApp, type AppSources, type EarlyStart, type RunningApp } from './app.js';
import { releaseBootMemory } from './platform/logging/boot-memory.js';
import { writePlainLine } from './platform/logging/logging.js';
import { serviceUrl } from './platform/config/service-url.js';

export interface BootstrapOptions extends AppSources {
  // Stop gracefully on SIGTERM and SIGINT, then exit (true): what a process that is only the
  // service wants. false when the caller owns the process's signals; it calls `stop` itself.
  handleSignals?: boolean;
}

export interface RunningService extends RunningApp {
  // Where it listens: PUBLIC_URL when set, else the address it bound.
  url: string;
  // The graceful stop (RunningApp.close), once however often it is asked.
  stop(): Promise<void>;
}

// The service started as `npm start` starts it: built, listening on HOST:PORT, its start logged
// (the last line says where it is, with its console and API docs), stopping gracefully on a
// signal. For teams that install the service as a package: `bootstrap({ extensions })`.
export async function bootstrap(options: BootstrapOptions = {}, early?: EarlyStart): Promise<RunningService> {
  const started = performance.now();
  const { handleSignals = true, ...sources } = options;
  const running = await createApp(sources, early);
  const { app, config, consolePath, close } = running;
  await releaseBootMemory();
  await app.listen(config.env.PORT, config.env.HOST);
  // nestjs-pino takes a call's last string for its context: the message comes before it.
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
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= close());
  if (handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopped) return;
      logger.log({ signal }, 'shutting down', CONTEXT);
      void stop().then(() => process.exit(0));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  return { ...running, close: stop, stop, url };
}

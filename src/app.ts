import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger, PinoLogger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { ExtensionCatalogue } from './kernel/extensions.js';
import type { Extension } from './extension.js';
import { composeExtensions, type ComposedExtensions } from './extensions.js';
import { ApiDone } from './delivery/broker/api-done.js';
import { corsMiddleware } from './kernel/cors.js';
import { inSequence, jsonBody, OpenRequests, requestContext } from './kernel/http-middleware.js';
import { NestLogger, requestLog } from './platform/logging/logging.js';
import type { ContextRequest } from './kernel/request-context.js';
import { securityHeaders } from './kernel/security-headers.js';
import { StrictValidationPipe } from './kernel/validation.js';
import { CorsPolicy } from './kernel/cors-policy.js';
import { EmbeddedPostgres } from './platform/database/embedded-postgres.js';
import { Metrics } from './kernel/metrics.js';
import { ServiceConfig, type ServiceConfigSources } from './settings.js';
import { buildOpenApiDocument } from './operations/openapi/openapi.js';
import { asyncApiSources, buildAsyncApiDocument, serveAsyncApiDocument } from './operations/asyncapi/asyncapi.js';
import { consoleStatic } from './operations/console/console-static.js';
import { projectPath } from './platform/config/project-path.js';
import { EventHub } from './channels/events/event-hub.js';
import { EventsIoAdapter } from './channels/events/events-io.adapter.js';
import { REALTIME_FORM_ROUTES } from './channels/realtime/realtime.controller.js';
import { INTROSPECTION_ROUTE } from './identity/auth/token.controller.js';
import { SocialProviderRegistry } from './identity/social/social-provider-registry.js';
import { TenancyMiddleware } from './identity/tenancy/tenancy.middleware.js';
import { OidcProviderMiddleware } from './identity/oidc-provider/oidc-provider.middleware.js';
import { ApiKeySection } from './identity/apikey/api-key.settings.js';
import { ConsoleSection } from './operations/console/console.settings.js';

export interface RunningApp {
  app: NestExpressApplication;
  config: ServiceConfig;
  // Where the admin console is served; undefined when it is off or not built.
  consolePath: string | undefined;
  // Closes the application, then the embedded database when there is one.
  close(): Promise<void>;
}

// What main.ts starts before it loads the application's modules: the embedded database opens
// on its own thread while they load (see startEarly in main.ts).
export interface EarlyStart {
  config: ServiceConfig;
  embedded: Promise<EmbeddedPostgres | undefined>;
  // The extensions the configuration was loaded with.
  composed: ComposedExtensions;
}

// What createApp builds the service from: the configuration's sources and the extensions
// (docs/extending.md) to mount.
export interface AppSources extends ServiceConfigSources {
  extensions?: readonly Extension[];
}

// How long a shutdown waits for the requests being answered.
const SHUTDOWN_GRACE_MS = 10_000;

// Builds the whole service: used by main.ts and by the tests, so both run the same thing.
export async function createApp(sources: AppSources = {}, early?: EarlyStart): Promise<RunningApp> {
  const composed = early?.composed ?? composeExtensions(sources.extensions ?? []);
  const config = early?.config ?? ServiceConfig.load({ ...sources, sections: composed.sections });
  const added = { ...composed.added, imports: [...(composed.added.imports ?? []), ...(sources.imports ?? [])] };
  const embedded = await (early?.embedded ?? EmbeddedPostgres.forConfig(config));
  try {
    const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, config.env.DATABASE_URL ?? embedded!.url, sources.clock, sources.logStream, added), {
      bodyParser: false, // jsonBody() parses, with our limit and error shape
      bufferLogs: true,
      abortOnError: false,
    });
    app.useLogger(new NestLogger(app.get(Logger)));
    app.disable('x-powered-by');
    // Answers are `Cache-Control: no-store` (images aside, served with their own validators): an
    // ETag would be a SHA-1 of every body that no client can use.
    app.set('etag', false);
    if (config.env.TRUST_PROXY) app.set('trust proxy', trustProxy(config.env.TRUST_PROXY));
    const metrics = app.get(Metrics);
    const apiDone = app.get(ApiDone);
    const tenancy = app.get(TenancyMiddleware);
    const oidcProvider = app.get(OidcProviderMiddleware);
    const events = app.get(EventHub);
    const openRequests = new OpenRequests();
    const logger = app.get(Logger);
    const signInProviders = app.get(SocialProviderRegistry);
    // The admin console's files (docs/console.md): before the body parser and the tenant, which
    // static files need neither of.
    const consoleFiles = consoleStatic(config.section(ConsoleSection).console, projectPath('dist', 'console'), config.env.PROJECT_CODENAME, (message) => logger.warn(message, 'Console'));
    // JSON bodies, then the tenant, last. Mounted here rather than through Nest's
    // MiddlewareConsumer, which adds them as routes matching every path (`{*splat}`): Express then
    // matches and decodes each request's path for them.
    app.use(
      inSequence(
        requestContext([requestLog(PinoLogger.root, [config.settings.apiKeys.fieldName]), (req, res) => metrics.observeRequest(req, res), (req, res) => apiDone.observeRequest(req, res)], openRequests),
        securityHeaders(),
        corsMiddleware(app.get(CorsPolicy)),
        ...(consoleFiles ? [consoleFiles.handle] : []),
        // The OpenID Connect provider (/auth-api/oidc/{store}): before the body parser, as the
        // provider reads its own bodies, and the tenant, which its path names.
        (req, res, next) => oidcProvider.handle(req as ContextRequest, res, next),
        // A provider's form-post return (Apple's), asked per request: extensions register theirs at init.
        jsonBody({ formRoutes: [...REALTIME_FORM_ROUTES, INTROSPECTION_ROUTE], formPaths: { test: (path) => signInProviders.takesFormPost(path) } }),
        (req, res, next) => tenancy.use(req as ContextRequest, res, next),
      ),
    );
    app.useWebSocketAdapter(new EventsIoAdapter(app, config, app.get(CorsPolicy), app.get(ExtensionCatalogue)));
    const { location, fieldName } = config.section(ApiKeySection).apiKeys;
    app.useGlobalPipes(new StrictValidationPipe(location === 'body' || location === 'query' ? [fieldName] : []));

    if (config.docsEnabled) {
      const openApi = buildOpenApiDocument(app, config);
      SwaggerModule.setup('docs', app, openApi);
      // The event channel's AsyncAPI document beside it (docs/events.md).
      serveAsyncApiDocument(app, () => buildAsyncApiDocument(asyncApiSources(config, app.get(ExtensionCatalogue), openApi)));
    }
    try {
      await app.init();
    } catch (error) {
      // A failed boot (e.g. a ConfigError from the seed) releases the pools and Redis it opened.
      await app.close().catch(() => undefined);
      throw error;
    }
    return {
      app,
      config,
      consolePath: consoleFiles?.served,
      // No new connection, and none kept: a kept-alive connection left open to a stopping
      // process is served by it, with its settings, while a new process owns the port. Idle
      // connections close at once; every answer from now on says `Connection: close` (Node.js
      // then closes its connection); event streams and sockets end (their clients connect again
      // elsewhere); the requests being answered finish while every module still runs (their
      // audit entries, sessions and events are written); what is left is closed; the modules stop.
      close: async () => {
        const server = app.getHttpServer() as Server;
        server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => res.setHeader('Connection', 'close'));
        openRequests.closeConnectionsAfterAnswers();
        if (server.listening) server.close();
        server.closeIdleConnections();
        events.shutdown();
        await openRequests.settled(SHUTDOWN_GRACE_MS);
        // The ended streams' connections, and answers the grace period did not see finish.
        server.closeAllConnections();
        await app.close();
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}

function trustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}

import type { LoggerService } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Params } from 'nestjs-pino';
import { createRequire } from 'node:module';
import { destination, symbols, transport, type DestinationStream, type Logger } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../config/app-config.js';
import { elapsedMs } from '../clock/elapsed.js';

// Where log lines go instead of stdout (tests read them).
export interface LogStream {
  write(line: string): void;
}

const REDACT_PATHS = ['*.password', '*.passwordHash', '*.accessToken', '*.authorization', '*.cookie'];

// JSON logs; credentials are never written. The logger is pino's, through nestjs-pino for the
// services. A line about a request carries its `requestId`, which the code that writes it takes
// from the request (RequestContext): the request line (requestLog() below), the error filter's,
// a failed API completion event's, an unavailable anti-bot check's. There is no per-request
// child logger: nestjs-pino's per-request middleware (pino-http) is not mounted (`forRoutes:
// []`), it cost a fifth of an authenticated request.
export function loggerOptions(config: AppConfig, stream?: LogStream): Params {
  const options: Options = {
    level: config.env.LOG_LEVEL,
    // `req` and `res` are written as requestLog() builds them, errors as errorForLog() says
    // (pino-http's own serializers expect the live request and response).
    wrapSerializers: false,
    serializers: { err: errorForLog },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return { pinoHttp: [options, (stream ?? readableLines(config) ?? stdoutLines()) as DestinationStream], forRoutes: [] };
}

// In a developer's terminal (NODE_ENV development, the default, and standard output a TTY),
// lines a person reads: pino-pretty on pino's transport thread. It is a development dependency:
// where it is not installed, in tests, staging and production, and into a pipe, lines stay JSON.
function readableLines(config: AppConfig): DestinationStream | undefined {
  if (config.env.NODE_ENV !== 'development' || !process.stdout.isTTY) return undefined;
  let target: string;
  try {
    target = createRequire(import.meta.url).resolve('pino-pretty');
  } catch {
    return undefined;
  }
  return transport({ target, options: { destination: 1, translateTime: 'SYS:HH:MM:ss.l', singleLine: true, ignore: 'pid,hostname,context', messageFormat: '{if context}{context}: {end}{msg}' } });
}

// Standard output as pino's own destination (sonic-boom: written asynchronously, flushed on exit)
// holding the lines as bytes. In its default text mode each line written while a write is in
// flight is appended to the pending text and all of it measured again (a copy of up to 16 kB per
// line: a tenth of what an authenticated request allocated under load); as bytes, a line costs
// its own size. Lines are written 4 kB at a time, and at least every 100 ms, as pino's
// documentation advises for throughput: under load one write per line, each a round trip to the
// file-system threads, was most of the request line's cost. A crash still writes what is held
// (sonic-boom flushes on exit); only a killed process loses up to 100 ms of lines.
function stdoutLines(): LogStream {
  const out = destination({ dest: 1, sync: false, contentMode: 'buffer', minLength: 4096, periodicFlush: 100 });
  return { write: (line) => out.write(Buffer.from(line) as unknown as string) };
}

// Nest's own account of its start, a line per module, controller, route and gateway message
// (~160 lines, most of a start's output): at debug, so that at the default level a start is the
// few lines that ask something of a person, then the address (writePlainLine). Their warnings and
// errors keep their level.
const NEST_START_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'WebSocketsController', 'NestApplication']);

// The logger Nest is given (app.useLogger): the service's, with Nest's start-up lines at debug.
// The context is a call's last argument (Nest's Logger appends it).
export class NestLogger implements LoggerService {
  constructor(private readonly logger: Required<Omit<LoggerService, 'setLogLevels'>>) {}

  log(message: unknown, ...params: unknown[]): void {
    if (NEST_START_CONTEXTS.has(params.at(-1) as string)) this.logger.debug(message, ...params);
    else this.logger.log(message, ...params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.logger.error(message, ...params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.logger.warn(message, ...params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.logger.debug(message, ...params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.logger.verbose(message, ...params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.logger.fatal(message, ...params);
  }
}

// A line of plain text for a person, on the log's own stream: after every line logged before it.
// Written to standard output beside the log, it landed among the lines pino still held.
export function writePlainLine(root: Logger, text: string): void {
  const stream = (root as unknown as Record<symbol, { write(line: string): void }>)[symbols.streamSym];
  stream.write(`${text}\n`);
}

// What the request line reads of a request (the kernel's request context carries it).
type LoggedRequest = Request & { ctx: { requestId: string; startedAt: bigint; store?: { id: string } } };

// One line per request, health checks aside: method, path (credentials in the query masked), the
// caller's address, the status and the time taken; never headers (tokens, cookies) or bodies
// (passwords). A request the client gave up on before its answer is a warning. Called once the
// request is over (see RequestEndHook).
// `secretParams`: query parameters masked beside the usual credentials (the API key's field).
export function requestLog(root: Logger, secretParams: readonly string[] = []): (req: LoggedRequest, res: Response) => void {
  // The line is built here as pino would write it (its level and time, the logger's bindings,
  // then the fields), and handed to pino's destination: on every request, pino's generic walk
  // of the fields cost more than the line's few known values need. Only the path can hold
  // characters JSON escapes; the request id is checked to be plain (requestContext), the rest
  // are ids, numbers, an HTTP method and an address.
  const { lsCacheSym, timeSym, chindingsSym, streamSym } = symbols;
  const pinoOwn = root as unknown as Record<symbol, unknown>;
  const levelPrefix = pinoOwn[lsCacheSym] as Record<number, string>;
  const time = pinoOwn[timeSym] as () => string;
  const bindings = pinoOwn[chindingsSym] as string;
  const stream = pinoOwn[streamSym] as { write(line: string): void };
  // The names are settings-validated to letters, digits, _ and -.
  const masked = new RegExp(`([?&](${['access_token', 'token', 'code', 'apiKey', 'api_key', ...secretParams].join('|')})=)[^&]*`, 'gi');
  return (req, res) => {
    const url = req.originalUrl;
    if (url.startsWith('/health')) return;
    const level = res.statusCode >= 500 ? 'error' : res.writableFinished ? 'info' : 'warn';
    if (!root.isLevelEnabled(level)) return;
    const { ctx } = req;
    const storeId = ctx.store ? `,"storeId":"${ctx.store.id}"` : '';
    const path = JSON.stringify(url.includes('?') ? url.replace(masked, '$1[redacted]') : url);
    const address = req.socket.remoteAddress === undefined ? '' : `,"remoteAddress":"${req.socket.remoteAddress}"`;
    stream.write(
      `${levelPrefix[root.levels.values[level]]}${time()}${bindings},"requestId":"${ctx.requestId}"${storeId},"req":{"method":"${req.method}","url":${path}${address}},` +
        `"res":{"statusCode":${res.statusCode}},"responseTime":${Math.round(elapsedMs(ctx))},"msg":"${res.writableFinished ? 'request completed' : 'request aborted'}"}\n`,
    );
  };
}

type ErrorFields = Record<string, unknown> & { driverError?: Record<string, unknown> };

// An error as logged: what failed and where, never the values involved. A database error's
// parameters, its `detail` ("Failing row contains (...)", "Key (x)=(...)") and a Redis reply's
// command arguments carry password hashes, key hashes and session data, so they are left out,
// and values the message quotes are masked.
export function errorForLog(err: unknown): unknown {
  if (typeof err !== 'object' || err === null) return err;
  const e = err as ErrorFields;
  const driver = e.driverError ?? {};
  const type = typeof e.name === 'string' ? e.name : 'Error';
  const message = maskValues(String(e.message ?? ''));
  const frames = typeof e.stack === 'string' ? e.stack.split('\n').filter((line) => /^\s+at /.test(line)) : [];
  return {
    type,
    message,
    code: e.code ?? driver.code,
    query: typeof e.query === 'string' ? e.query : undefined, // placeholders ($1), not values
    table: driver.table,
    constraint: driver.constraint,
    column: driver.column,
    stack: [`${type}: ${message}`, ...frames].join('\n'),
  };
}

// `invalid input syntax for type uuid: "…"`, `Key (email)=(…)`: the quoted value goes.
function maskValues(message: string): string {
  return message.replace(/: "(?:[^"\\]|\\.)*"/g, ': "[masked]"').replace(/\)=\((?:.*)\)/g, ')=([masked])');
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../config/app-config.js';
import type { ContextRequest } from './request-context.js';

// Where log lines go instead of stdout (tests read them).
export interface LogStream {
  write(line: string): void;
}

// JSON logs with the request id on every line; credentials are never written.
export function loggerOptions(config: AppConfig, stream?: LogStream): Params {
  // The API-key field name is settings-validated to letters, digits, _ and -.
  const secretParams = new RegExp(`([?&](access_token|token|code|apiKey|api_key|${config.settings.apiKeys.fieldName})=)[^&]*`, 'gi');
  const options: Options = {
    level: config.env.LOG_LEVEL,
    genReqId: (req: IncomingMessage) => (req as ContextRequest).ctx?.requestId,
    autoLogging: { ignore: (req: IncomingMessage) => req.url?.startsWith('/health') ?? false },
    // The request id on every line logged while serving it, once: bound alone to the request's
    // logger under `requestId` (customProps are evaluated again for the completion line, so an
    // id there would appear twice).
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId' },
    customProps: (req: IncomingMessage) => ({ storeId: (req as ContextRequest).ctx?.store?.id }),
    serializers: {
      // Method, path and who: never headers (tokens, cookies) or bodies (passwords).
      req: (req: { method: string; url: string; remoteAddress?: string }) => ({
        method: req.method,
        url: req.url.replace(secretParams, '$1[redacted]'),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: errorForLog,
    },
    redact: { paths: ['*.password', '*.passwordHash', '*.accessToken', '*.authorization', '*.cookie'], censor: '[redacted]' },
  };
  return { pinoHttp: stream ? [options, stream as DestinationStream] : options };
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

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';
import type { ContextRequest } from './request-context.js';

// JSON logs with the request id on every line; credentials are never written.
export function loggerOptions(config: AppConfig): Params {
  // The API-key field name is settings-validated to letters, digits, _ and -.
  const secretParams = new RegExp(`([?&](access_token|token|apiKey|api_key|${config.settings.apiKeys.fieldName})=)[^&]*`, 'gi');
  return {
    pinoHttp: {
      level: config.env.LOG_LEVEL,
      genReqId: (req: IncomingMessage) => (req as ContextRequest).ctx?.requestId,
      autoLogging: { ignore: (req: IncomingMessage) => req.url?.startsWith('/health') ?? false },
      // On the request's line and every line logged while serving it.
      customProps: (req: IncomingMessage) => ({ requestId: (req as ContextRequest).ctx?.requestId, storeId: (req as ContextRequest).ctx?.store?.id }),
      serializers: {
        // Method, path and who: never headers (tokens, cookies) or bodies (passwords).
        req: (req: { method: string; url: string; remoteAddress?: string }) => ({
          method: req.method,
          url: req.url.replace(secretParams, '$1[redacted]'),
          remoteAddress: req.remoteAddress,
        }),
        res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      },
      redact: { paths: ['*.password', '*.passwordHash', '*.accessToken', '*.authorization', '*.cookie'], censor: '[redacted]' },
    },
  };
}

import type { INestApplication } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
  type ResponseObject,
  type SchemaObject,
  type SecurityRequirementObject,
} from '@nestjs/swagger';
import { ApiResultMeta, apiFailures, type ApiResultSpec } from '../../kernel/api-result.js';
import { EnvelopeSpecOf } from '../../kernel/envelope.js';
import { errorCodes } from '../../kernel/errors.js';
import { Authenticated, Public, type AuthPolicy } from '../../kernel/policy.js';
import { controllerRoutes } from '../../kernel/policy-audit.js';
import type { AppConfig } from '../../platform/config/app-config.js';

const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const OK: SchemaObject = { type: 'string', enum: ['OK'] };

// Shapes shared by every operation: the error bodies and the business-route envelope.
// Built with the document: the errCodes are those the root registered (src/errors.ts).
const schemas = (): Record<string, SchemaObject> => ({
  ErrorBody: {
    type: 'object',
    required: ['result', 'status', 'message', 'errCode'],
    properties: {
      result: { type: 'string', enum: ['ERR'] },
      status: { type: 'integer', description: 'The HTTP status.' },
      message: { type: 'string', pattern: '^errMsg_', description: 'A message code, never a sentence: the catalogue\'s for the `errCode`, or a more precise one where a route names it (`errMsg_<route>RequiresEmail2FA`).' },
      errCode: { type: 'string', enum: errorCodes(), description: 'Stable code to act on.' },
      detail: { type: 'string', description: 'A sentence for people: which field, what is wrong. Not for code to match.' },
      requestId: { type: 'string', description: 'Also in the `x-request-id` header; quote it when reporting a problem.' },
    },
  },
  NoLoginBody: {
    type: 'object',
    required: ['status', 'message'],
    properties: { status: { type: 'string', enum: ['ERR'] }, message: { type: 'string', enum: ['No login found'] } },
  },
  Paging: {
    type: 'object',
    required: ['pageNumber', 'pageRowCount', 'totalRowCount', 'pageCount'],
    properties: {
      pageNumber: { type: 'integer' },
      pageRowCount: { type: 'integer' },
      totalRowCount: { type: 'integer' },
      pageCount: { type: 'integer' },
    },
  },
  Envelope: {
    type: 'object',
    description: 'Wraps every business-route (`/v1/...`, `/notifications`) answer; the data is under `dataName`.',
    required: ['status', 'statusCode', 'elapsedMs', 'requestId', 'dataName', 'method', 'action', 'appVersion', 'rowCount', 'userId', 'sessionId'],
    properties: {
      status: OK,
      statusCode: { type: 'string' },
      elapsedMs: { type: 'number' },
      ssoTime: { type: 'number' },
      source: { type: 'string' },
      cacheKey: { type: 'string', description: 'Same value for the same caller, store and request.' },
      userId: { type: 'string', nullable: true },
      sessionId: { type: 'string', nullable: true },
      requestId: { type: 'string' },
      dataName: { type: 'string' },
      method: { type: 'string' },
      action: { type: 'string' },
      appVersion: { type: 'string' },
      rowCount: { type: 'integer' },
      paging: ref('Paging'),
      filters: { type: 'array', items: {} },
      uiPermissions: { type: 'array', items: { type: 'string' } },
    },
  },
});

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input or unknown store (`errCode` says which).',
  401: 'No credentials, or invalid or expired ones.',
  403: 'Known caller, not allowed (role, store, pending verification...).',
  404: 'Nothing with this id in the targeted store.',
  409: 'Conflicts with existing data (e.g. an identifier already registered).',
  413: 'Body too large.',
  415: 'Body is not JSON (or the upload not an accepted type).',
  429: 'Too many requests; retry after `Retry-After` seconds.',
  500: 'Unexpected fault; the body carries only the request id.',
  503: 'A service it depends on is unavailable; retry later.',
};

// Paths that belong to no store and take no body: only faults can go wrong there.
const UNTENANTED = /^\/(health|metrics)(\/|$)/;

// The OpenAPI document, completed from what the routes already declare: security from the
// policy (none on public routes), error answers from the policy, method and decorators, the
// envelope from @Envelope, and every `{param}` of a path.
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const project = config.env.PROJECT_CODENAME;
  const builder = new DocumentBuilder()
    .setTitle('Identity, store-tenant and realtime event service')
    .setVersion(config.env.APP_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The `accessToken` of a login.' }, 'accessToken')
    .addCookieAuth(`${project}-access-token`, { type: 'apiKey', in: 'cookie', description: `Set by login: \`${project}-access-token\` at root, \`${project}-access-token-<codename>\` for a store.` }, 'accessTokenCookie')
    .addApiKey({ type: 'apiKey', in: 'header', name: `${project}-machine-token`, description: 'Ed25519 machine-to-machine token of a listed service.' }, 'machineToken')
    .addGlobalParameters({ name: `${project}-store-codename`, in: 'header', required: false, schema: { type: 'string' }, description: 'Targeted store (tenant); root when absent.' });
  const apiKeys = config.settings.apiKeys;
  if (apiKeys.enabled) {
    const description = `An API key (\`sk_${project}_...\`), created at POST /auth-api/v1/apikeys.`;
    if (apiKeys.location === 'bearer') builder.addBearerAuth({ type: 'http', scheme: 'bearer', description }, 'apiKey');
    else if (apiKeys.location !== 'body') builder.addApiKey({ type: 'apiKey', in: apiKeys.location, name: apiKeys.fieldName, description }, 'apiKey');
  }
  if (config.env.PUBLIC_URL) builder.addServer(config.env.PUBLIC_URL);
  const document = SwaggerModule.createDocument(app, builder.build());
  const hasApiKeyScheme = apiKeys.enabled && apiKeys.location !== 'body';

  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, ...schemas() };
  document.components.responses = Object.fromEntries(
    Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [`Error${status}`, { description, content: { 'application/json': { schema: ref('ErrorBody') } } }]),
  );

  const reflector = app.get(Reflector);
  for (const route of controllerRoutes(app.get(DiscoveryService), app.get(MetadataScanner))) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const operation = document.paths[path]?.[route.method.toLowerCase() as 'get'] as OperationObject | undefined;
    if (!operation) continue;
    const targets = [route.handler, route.metatype as new () => unknown];
    const policy = reflector.getAllAndOverride(Public, targets) ? undefined : reflector.getAllAndOverride(Authenticated, targets);
    operation.security = security(policy, hasApiKeyScheme);
    addPathParameters(operation, path);
    setSuccess(operation, reflector.get(ApiResultMeta, route.handler), reflector.get(EnvelopeSpecOf, route.handler));
    // Any route may meet a fault or an unreachable PostgreSQL or Redis.
    const statuses = new Set([500, 503, ...apiFailures(route.handler)]);
    if (!UNTENANTED.test(path)) [400, 403].forEach((s) => statuses.add(s));
    if (policy) statuses.add(401);
    if (/\{/.test(path)) statuses.add(404);
    if (['POST', 'PATCH', 'PUT'].includes(route.method)) [409, 413, 415].forEach((s) => statuses.add(s));
    for (const status of [...statuses].filter((s) => ERROR_DESCRIPTIONS[s]).sort()) {
      operation.responses[status] ??= policy?.noLoginShape && status === 401
        ? { description: ERROR_DESCRIPTIONS[401], content: { 'application/json': { schema: ref('NoLoginBody') } } }
        : { $ref: `#/components/responses/Error${status}` };
    }
  }
  return document;
}

function security(policy: AuthPolicy | undefined, hasApiKeyScheme: boolean): SecurityRequirementObject[] {
  if (!policy) return [];
  const ways: SecurityRequirementObject[] = [];
  if (policy.principals.user) ways.push({ accessToken: [] }, { accessTokenCookie: [] });
  if (policy.principals.apiKey && hasApiKeyScheme) ways.push({ apiKey: [] });
  if (policy.principals.machine) ways.push({ machineToken: [] });
  // Open to anyone when the setting says so: credentials are then optional.
  if (policy.publicWhen) ways.push({});
  return ways;
}

function addPathParameters(operation: OperationObject, path: string): void {
  operation.parameters ??= [];
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    const present = operation.parameters.some((p) => 'in' in p && p.in === 'path' && p.name === name);
    if (!present) operation.parameters.unshift({ name, in: 'path', required: true, schema: { type: 'string' } } satisfies ParameterObject);
  }
}

function setSuccess(operation: OperationObject, result: ApiResultSpec | undefined, envelope: { dataName: string } | undefined): void {
  if (!result) return;
  const status = Object.keys(operation.responses).find((s) => s.startsWith('2')) ?? '200';
  const data: SchemaObject | ReferenceObject = result.list ? { type: 'array', items: ref(result.type.name) } : ref(result.type.name);
  let schema: SchemaObject | ReferenceObject = data;
  if (envelope) {
    const properties: Record<string, SchemaObject | ReferenceObject> = { [envelope.dataName]: data };
    for (const [name, type] of Object.entries(result.extra)) properties[name] = ref(type.name);
    const own: SchemaObject = { type: 'object', required: Object.keys(properties), properties };
    if (result.list) own.required!.push('paging');
    schema = { allOf: [ref('Envelope'), own] };
  }
  const existing = operation.responses[status] as ResponseObject | undefined;
  operation.responses[status] = { description: existing?.description || 'Success.', content: { 'application/json': { schema } } };
}

import type { INestApplication } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type HeadersObject,
  type ReferenceObject,
  type ResponseObject,
  type SchemaObject,
  type SecurityRequirementObject,
} from '@nestjs/swagger';
import { ApiAccessTokenHeaderMeta, ApiResultMeta, apiFailures, type ApiResultSpec } from '../../kernel/api-result.js';
import { EnvelopeSpecOf } from '../../kernel/envelope.js';
import { errorCodes } from '../../kernel/errors.js';
import { Authenticated, Public, type AuthPolicy } from '../../kernel/policy.js';
import { controllerRoutes } from '../../kernel/policy-audit.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { ApiKeySection } from '../../identity/apikey/api-key.settings.js';

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

// The tags in the order a newcomer meets them (Swagger UI lists them so): a store, an account in
// it, signing in, the users; then the other ways to sign in and verify, access control, and what
// other services and operators use. Every tag a controller uses is here (a test checks it).
const TAGS: [name: string, description: string][] = [
  ['stores', 'The stores (tenants): the picker list, the targeted store read and changed, every store for SaaS administrators.'],
  ['registration', 'A new store with its owner, or a new user in the targeted store.'],
  ['auth', 'Log in and out, refresh tokens, the current user (`/currentuser`) and its own sessions; the keys and discovery document that verify tokens.'],
  ['users', 'Creating, listing, changing and deleting the users of the targeted store, their sessions and second factors.'],
  ['password policy', 'The rules a new password must meet, for a sign-up or password form.'],
  ['verification', 'Codes and links that verify an email or mobile, reset a password, or complete an email or mobile second factor.'],
  ['mfa', 'Authenticator apps (TOTP) and recovery codes: enrolment, the sign-in\'s second factor, removal.'],
  ['passkeys', 'Passkeys (WebAuthn): enrolment, listing, renaming, deleting, and signing in without a password.'],
  ['passwordless', 'Sign in with a code or link sent to an email or mobile.'],
  ['social login', 'Sign in with Google, Apple, GitHub and other OAuth providers, then exchange the socialCode.'],
  ['single sign-on', 'Sign in with the OpenID Connect provider the deployment configures; ends like a social login.'],
  ['anti-bot', 'The challenge that protected routes (registration, codes sent) ask a client to solve.'],
  ['user groups', 'Groups of users and their members, for granting permissions to many at once.'],
  ['permissions', 'The caller\'s permissions, and the grants administrators give roles, users, groups or the whole store.'],
  ['api keys', 'API keys (`sk_…`) a user creates for its scripts and services, with its roles or fewer; their validation by other services.'],
  ['avatars', 'Generated avatars (identicons).'],
  ['bucket', 'Uploaded avatar images: upload and download.'],
  ['notifications', 'The caller\'s in-app notifications.'],
  ['events', 'Live events of the store as a server-sent event stream (also over Socket.IO).'],
  ['realtime', 'The Pusher-compatible channel: channel authorization, user authentication, provider webhooks.'],
  ['webhooks', 'A store\'s webhook endpoints: its events sent to backend services as signed (Standard Webhooks), retried requests, with a delivery log.'],
  ['oauth clients', 'A store\'s OAuth clients of its OpenID Connect provider: registered, listed, changed, deleted, their secret rotated (shown once, kept as a hash).'],
  ['oauth consents', 'The applications a user allowed through the store\'s OpenID Connect provider (remembered consents): listed and revoked, with their tokens.'],
  ['overview', 'A store at a glance for the admin console: users, live sessions, sign-ins.'],
  ['audit log', 'The store\'s security audit log: read, exported, its hash chain checked.'],
  ['health', 'Liveness and readiness, for orchestrators and load balancers.'],
  ['operations', 'Prometheus metrics.'],
];

// What a newcomer reads first at /docs: what this is, how to name a store, how to authenticate.
function introduction(project: string): string {
  return [
    'Multi-tenant identity service: stores (tenants) and their users, logins and sessions, second factors, API keys, access control, notifications and live events.',
    '',
    `**The store.** Each request acts in one store: name it with the \`${project}-store-codename\` header (or a \`_store\` query parameter, e.g. on a browser redirect). Without one, the root store is targeted; an unknown codename answers \`400 StoreNotFound\`. New stores come from \`POST /auth-api/v1/registerstoreowner\`.`,
    '',
    `**Authenticating.** \`POST /auth-api/login\` answers an \`accessToken\` (a JWT): send it as \`Authorization: Bearer <token>\`. Browsers also receive it as the httpOnly cookie \`${project}-access-token\` (\`${project}-access-token-<codename>\` in a store), which is accepted in its place. Services send an API key (\`sk_${project}_…\`) or a machine token (\`${project}-machine-token\`). Each operation lists what it accepts; public ones accept anything.`,
    '',
    '**Answers.** Business routes (`/v1/...`) wrap their data in an envelope, under `dataName`. Every error is `{ result: "ERR", status, errCode, message, detail? }`: act on `errCode`, show `detail` to people.',
    '',
    `**More.** This document is served at \`/docs-json\`, this page at \`/docs\`. The guides are in the service's repository, \`docs/\`: \`api.md\` (routes, envelope, stores), \`authentication.md\` (logins, tokens, second factors, social login), \`errors.md\` (every \`errCode\`).`,
  ].join('\n');
}

// The OpenAPI document, completed from what the routes already declare: security from the
// policy (none on public routes), error answers from the policy, method and decorators, the
// envelope from @Envelope, and every `{param}` of a path.
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const project = config.env.PROJECT_CODENAME;
  const builder = new DocumentBuilder()
    .setTitle('Identity, store-tenant and realtime event service')
    .setDescription(introduction(project))
    .setVersion(config.env.APP_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The `accessToken` of a login.' }, 'accessToken')
    .addCookieAuth(`${project}-access-token`, { type: 'apiKey', in: 'cookie', description: `Set by login: \`${project}-access-token\` at root, \`${project}-access-token-<codename>\` for a store.` }, 'accessTokenCookie')
    .addApiKey({ type: 'apiKey', in: 'header', name: `${project}-machine-token`, description: 'Ed25519 machine-to-machine token of a listed service.' }, 'machineToken')
    .addGlobalParameters({ name: `${project}-store-codename`, in: 'header', required: false, schema: { type: 'string' }, description: 'Targeted store (tenant); root when absent.' });
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const apiKeys = config.section(ApiKeySection).apiKeys;
  if (apiKeys.enabled) {
    const format = `sk_${project}_<48 hex>`;
    const description = `An API key: opaque, \`sk_${project}_\` and 48 hexadecimal characters (not a JWT: nothing to decode), shown once when created at POST /auth-api/v1/apikeys.`;
    // The builder calls every bearer scheme a JWT unless told otherwise.
    if (apiKeys.location === 'bearer') builder.addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: format, description }, 'apiKey');
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
    const tokenHeader = reflector.get(ApiAccessTokenHeaderMeta, route.handler);
    if (tokenHeader) addAccessTokenHeaders(operation, project, tokenHeader.when);
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

// The access token's header and the cookies, on the success answer of a route that signs in.
// A header's name carries the store's codename, which a document cannot spell: both forms.
function addAccessTokenHeaders(operation: OperationObject, project: string, when: string | undefined): void {
  const status = Object.keys(operation.responses).find((s) => s.startsWith('2'));
  if (!status) return;
  const only = when ? ` Only ${when}.` : '';
  const success = operation.responses[status] as ResponseObject;
  const string: SchemaObject = { type: 'string' };
  const headers: HeadersObject = {
    [`${project}-access-token`]: {
      description: `The access token (as \`accessToken\` in the body), for clients that keep no cookies, when the root store is targeted.${only}`,
      schema: string,
    },
    [`${project}-access-token-{codename}`]: {
      description: `The same when a store is targeted: \`{codename}\` is its codename (\`${project}-access-token-acme\` in the store \`acme\`).${only}`,
      schema: string,
    },
    'Set-Cookie': {
      description: `The access token as the httpOnly cookie of the header's name (SameSite=Lax); with refresh tokens on, the refresh token as \`${project}-refresh-token[-{codename}]\`, sent to \`/auth-api/refresh\` only.${only}`,
      schema: string,
    },
  };
  success.headers = { ...success.headers, ...headers };
}

// The JSON Schemas of what the event channel delivers: the service's own events' data as the
// API shows it (the OpenAPI document's response schemas, converted to JSON Schema), the packets
// around it, and the shaping a topic applies (payloadMapping, excludeFields).
import { apiEventTopic, dbEventTopic, resolveTopicAlias } from '../../delivery/broker/topics.js';
import { REJECT_REASONS } from '../../channels/events/event-access.service.js';

export type JsonSchema = { [keyword: string]: unknown };

const REF = '#/components/schemas/';
export const schemaRef = (name: string): JsonSchema => ({ $ref: `${REF}${name}` });
const uuid: JsonSchema = { type: 'string', format: 'uuid' };
const nullableUuid: JsonSchema = { type: ['string', 'null'], format: 'uuid' };
const string: JsonSchema = { type: 'string' };

const object = (properties: Record<string, JsonSchema>, required: string[] = Object.keys(properties), description?: string): JsonSchema => ({
  type: 'object',
  ...(description && { description }),
  required,
  properties,
});

// OpenAPI 3.0 schemas as JSON Schema (what AsyncAPI 3.0 reads by default): `nullable` becomes a
// `null` type, `example` an `examples` list; references keep their names.
export function toJsonSchema(schema: unknown): JsonSchema {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return {};
  const { nullable, example, ...rest } = schema as JsonSchema;
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(rest)) {
    if (keyword === 'properties') out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toJsonSchema(v)]));
    else if (keyword === 'items' || keyword === 'not' || (keyword === 'additionalProperties' && typeof value === 'object')) out[keyword] = toJsonSchema(value);
    else if (keyword === 'allOf' || keyword === 'oneOf' || keyword === 'anyOf') out[keyword] = (value as unknown[]).map(toJsonSchema);
    else out[keyword] = value;
  }
  if (example !== undefined) out.examples = [example];
  if (nullable !== true) return out;
  if (typeof out.type === 'string' && !out.allOf && !out.oneOf && !out.anyOf && !out.$ref) {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
    return out;
  }
  // A nullable reference (`allOf: [{ $ref }]`): the object or null.
  const { type: _type, description, ...inner } = out;
  return { ...(description !== undefined && { description }), anyOf: [inner, { type: 'null' }] };
}

// The component schemas a schema refers to, directly or through others.
export function referencedSchemas(schema: unknown, components: Record<string, unknown>, found = new Set<string>()): Set<string> {
  if (!schema || typeof schema !== 'object') return found;
  if (Array.isArray(schema)) {
    for (const item of schema) referencedSchemas(item, components, found);
    return found;
  }
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === '$ref' && typeof value === 'string' && value.startsWith(REF)) {
      const name = value.slice(REF.length);
      if (!found.has(name) && components[name]) {
        found.add(name);
        referencedSchemas(components[name], components, found);
      }
    } else referencedSchemas(value, components, found);
  }
  return found;
}

// One object schema from references and `allOf`s of objects, so that fields can be taken out of
// it; undefined when the schema is not that simple.
export function flattenObject(schema: JsonSchema, components: Record<string, JsonSchema>, depth = 0): JsonSchema | undefined {
  if (depth > 10) return undefined;
  if (typeof schema.$ref === 'string') {
    const target = components[schema.$ref.slice(REF.length)];
    return target && flattenObject(target, components, depth + 1);
  }
  const parts = Array.isArray(schema.allOf) ? (schema.allOf as JsonSchema[]).map((s) => flattenObject(s, components, depth + 1)) : [];
  if (parts.some((p) => !p)) return undefined;
  const { allOf: _allOf, ...own } = schema;
  if (own.type !== undefined && own.type !== 'object') return undefined;
  if (own.oneOf || own.anyOf) return undefined;
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();
  for (const part of [...(parts as JsonSchema[]), own]) {
    Object.assign(properties, part.properties ?? {});
    for (const name of (part.required as string[] | undefined) ?? []) required.add(name);
  }
  return { ...own, type: 'object', required: [...required], properties };
}

// The service's own events, by `<object>-<verb>`, as src/channels/events/event-bridge.ts puts them
// on the broker: the schema of their data, and whether a database event carries it too.
interface KnownPayload {
  schema: string;
  database: boolean;
}

const KNOWN: Record<string, KnownPayload> = {
  'store-created': { schema: 'StoreCreatedData', database: true },
  'user-created': { schema: 'UserData', database: true },
  'user-updated': { schema: 'UserData', database: true },
  'user-deleted': { schema: 'UserDeletedData', database: true },
  'apikey-created': { schema: 'ApiKeyCreatedData', database: true },
  'apikey-deleted': { schema: 'ApiKeyDeletedData', database: true },
  'notification-created': { schema: 'NotificationCreatedData', database: true },
  // Not a database event: the rows are gone, the end itself is the news.
  'session-ended': { schema: 'SessionEndedData', database: false },
};

// The response schemas of the OpenAPI document the payloads reuse, and what each stands for
// when the document has none.
const OPENAPI_SCHEMAS: Record<string, string> = {
  UserResponse: 'The user as the API shows it.',
  StoreResponse: 'The store as the API shows it.',
  ApiKeyResponse: 'The API key as the API lists it (never the key itself).',
  AuditEntryResponse: 'The audit entry as GET /auth-api/v1/auditlogs shows it.',
};

// The payload schemas of the service's own events, the packets, and the OpenAPI schemas they use.
export function channelSchemas(openApiSchemas: Record<string, unknown>, maxTopicsPerRequest?: number): Record<string, JsonSchema> {
  const reused: Record<string, JsonSchema> = {};
  for (const [name, description] of Object.entries(OPENAPI_SCHEMAS)) {
    if (openApiSchemas[name]) {
      reused[name] = toJsonSchema(openApiSchemas[name]);
      for (const dependency of referencedSchemas(openApiSchemas[name], openApiSchemas)) reused[dependency] ??= toJsonSchema(openApiSchemas[dependency]);
    } else {
      reused[name] = { type: 'object', description };
    }
  }
  const owner = (whose: string): JsonSchema => ({ ...nullableUuid, description: `The owner (${whose}): the user a private topic delivers it to, beside the store's admins.` });
  const topics: JsonSchema = { type: 'array', items: string, ...(maxTopicsPerRequest && { maxItems: maxTopicsPerRequest }) };
  return {
    ...reused,
    StoreCreatedData: {
      description: 'The new store as the API shows it, with `storeId` (its id) and `_owner` (its owner).',
      allOf: [schemaRef('StoreResponse'), object({ storeId: uuid, _owner: owner('the store\'s owner') })],
    },
    UserData: { description: 'The user as the API shows it (custom user properties beside its fields); `_owner` is the user that created it.', allOf: [schemaRef('UserResponse')] },
    UserDeletedData: object({ id: uuid, storeId: uuid, _owner: owner('the user that created it') }, undefined, 'A user deleted: its id only.'),
    ApiKeyCreatedData: {
      description: 'The new API key as the API lists it (never the key itself), with `_owner`, the user it acts as.',
      allOf: [schemaRef('ApiKeyResponse'), object({ _owner: { ...uuid, description: 'The key\'s user.' } })],
    },
    ApiKeyDeletedData: object({ id: uuid, userId: uuid, storeId: uuid, _owner: { ...uuid, description: 'The key\'s user.' } }, undefined, 'An API key deleted: its id and its user.'),
    NotificationCreatedData: object(
      { id: uuid, storeId: uuid, userId: nullableUuid, channel: { ...string, description: 'email, sms, push or inApp.' }, template: string, _owner: owner('its recipient') },
      undefined,
      'A notification queued for a user.',
    ),
    SessionEndedData: object(
      { storeId: uuid, userId: uuid, sessionIds: { type: 'array', items: string, description: 'The sessions that ended; a device that finds its own signs out.' }, _owner: { ...uuid, description: 'The user whose sessions ended.' } },
      undefined,
      'Sessions of one user ended (a logout, signing out other devices, an admin ending them, a new password, a deactivation): ids only, never a token.',
    ),
    AuditEntryData: object({ storeId: uuid, entry: schemaRef('AuditEntryResponse') }, undefined, 'An audit entry, once written.'),
    ApiDoneData: object(
      {
        storeId: { ...uuid, description: 'The store the request targeted.' },
        _owner: { ...uuid, description: 'The caller\'s user id, when signed in.' },
        method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'] },
        path: { ...string, description: 'The route\'s pattern (`/auth-api/v1/users/:id`).' },
        statusCode: { type: 'integer', minimum: 200, maximum: 299 },
      },
      ['method', 'path', 'statusCode'],
      'An API answered a change with success: never the request\'s or the answer\'s body.',
    ),
    SubscribeRequest: object({ topics: { ...topics, minItems: 1, description: 'Topic names of the subscription.' } }),
    SubscribedPacket: object({
      topics: { type: 'array', items: string, description: 'The topics now flowing (those already held too).' },
      rejected: {
        type: 'array',
        description: 'The topics refused, each once; they are not retried.',
        items: object({ topic: string, reason: { type: 'string', enum: Object.values(REJECT_REASONS) } }),
      },
    }),
    UnsubscribedPacket: object({ topics: { type: 'array', items: string, description: 'The topics dropped.' } }),
    ErrorPacket: object(
      {
        message: { type: 'string', pattern: '^errMsg_', description: 'The message code, as in HTTP error bodies.' },
        errCode: { type: 'string', description: 'The stable code to act on (docs/errors.md).' },
        detail: { type: 'string', description: 'A sentence for people.' },
      },
      ['message', 'errCode'],
      'A refusal, or the end of the connection (a logout, an expiry, a shutdown, a slow reader).',
    ),
  };
}

// Every alias form resolves: only the `<apiName>:done` ones matter here.
const ANY_OBJECT: ReadonlySet<string> = { has: () => true } as unknown as ReadonlySet<string>;

// What a topic's data is, by the topic the settings name (`alias`) and the broker topic it
// resolved to: a component's name, or undefined for a topic whose publisher the service does not know.
export function knownPayload(alias: string, brokerTopic: string, service: string): string | undefined {
  const resolved = resolveTopicAlias(alias, service, ANY_OBJECT);
  if ('apiName' in resolved && resolved.apiName) return 'ApiDoneData';
  for (const [key, known] of Object.entries(KNOWN)) {
    const [object, verb] = key.split('-');
    if (brokerTopic === apiEventTopic(service, object, verb)) return known.schema;
    if (known.database && brokerTopic === dbEventTopic(service, object, verb)) return known.schema;
  }
  if (brokerTopic.startsWith(`${service}-audit-`)) return 'AuditEntryData';
  return undefined;
}

// The top-level keys of a payloadMapping that is a map literal (`{"orderId": data.id, ...}`);
// undefined for any other expression.
export function mappedKeys(expression: string): string[] | undefined {
  const text = expression.trim();
  if (!text.startsWith('{') || !text.endsWith('}')) return undefined;
  const keys: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let entryStart = 1;
  const entry = (end: number): boolean => {
    const part = text.slice(entryStart, end).trim();
    if (!part) return true;
    const key = /^(["'])((?:\\.|(?!\1).)*)\1\s*:/s.exec(part);
    if (!key) return false;
    keys.push(key[2]);
    return true;
  };
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if ('{[('.includes(c)) depth++;
    else if ('}])'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      if (!entry(i)) return undefined;
      entryStart = i + 1;
    }
  }
  if (quote || depth !== 0 || !entry(text.length - 1)) return undefined;
  return keys;
}

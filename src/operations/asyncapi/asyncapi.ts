import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { compileSubscriptions, type CompiledTopic } from '../../channels/events/event-subscriptions.js';
import { BrokerSection } from '../../delivery/broker/broker.settings.js';
import { ApiKeySection } from '../../identity/apikey/api-key.settings.js';
import type { DataObjectAccessSetting, EventSubscriptionSetting } from '../../kernel/data-objects.settings.js';
import type { ExtensionCatalogue } from '../../kernel/extensions.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { channelSchemas, flattenObject, knownPayload, mappedKeys, schemaRef, type JsonSchema } from './asyncapi-schemas.js';

// Where the document is served, beside /docs and /docs-json, when they are.
export const ASYNCAPI_PATH = '/docs/asyncapi.json';

// An AsyncAPI 3.0 document, as plain JSON.
export interface AsyncApiDocument {
  asyncapi: '3.0.0';
  info: { title: string; version: string; description: string };
  defaultContentType: string;
  servers: Record<string, JsonSchema>;
  channels: Record<string, AsyncApiChannel>;
  operations: Record<string, JsonSchema>;
  components: { schemas: Record<string, JsonSchema>; messages: Record<string, AsyncApiMessage>; securitySchemes: Record<string, JsonSchema> };
}

export interface AsyncApiChannel {
  address: string;
  title: string;
  description: string;
  servers: JsonSchema[];
  messages: Record<string, AsyncApiMessage | { $ref: string }>;
  bindings?: JsonSchema;
  'x-subscription': string;
  'x-transport': 'websocket' | 'sse';
}

export interface AsyncApiMessage {
  name: string;
  title?: string;
  summary?: string;
  description?: string;
  contentType?: string;
  payload: JsonSchema;
  [extension: `x-${string}`]: unknown;
}

// Who receives a topic's events, by its data object's access level (docs/events.md).
export type TopicAccess = 'public' | 'storeUsers' | 'ownerAndAdmins' | 'admins';

// What the document is built from: the running settings (and the extensions' subscriptions and
// data objects beside them), the service's names, and the OpenAPI document's component schemas
// for the service's own events.
export interface AsyncApiSources {
  eventSubscriptions: readonly EventSubscriptionSetting[];
  dataObjectAccess: readonly DataObjectAccessSetting[];
  // SERVICE_CODENAME: the broker topics' prefix.
  serviceCodename: string;
  // PROJECT_CODENAME: the store header's prefix.
  projectCodename: string;
  version: string;
  // PUBLIC_URL; else the servers are `localhost:<port>`.
  publicUrl?: string;
  port?: number;
  maxTopicsPerRequest?: number;
  apiKeys?: { enabled: boolean; location: string; fieldName: string };
  openApiSchemas?: Record<string, unknown>;
}

// The sources of the running service: its settings, its extensions' subscriptions and data
// objects (the settings' win where both name one, as the event channel reads them), and the
// OpenAPI document it serves.
export function asyncApiSources(config: AppConfig, extensions: Pick<ExtensionCatalogue, 'eventSubscriptions' | 'dataObjects'>, openApi?: OpenAPIObject): AsyncApiSources {
  const broker = config.section(BrokerSection);
  return {
    eventSubscriptions: [...extensions.eventSubscriptions, ...broker.eventSubscriptions],
    dataObjectAccess: [...extensions.dataObjects, ...broker.dataObjectAccess],
    serviceCodename: config.env.SERVICE_CODENAME,
    projectCodename: config.env.PROJECT_CODENAME,
    version: config.env.APP_VERSION,
    publicUrl: config.env.PUBLIC_URL,
    port: config.env.PORT,
    maxTopicsPerRequest: broker.eventChannel.maxTopicsPerRequest,
    apiKeys: config.section(ApiKeySection).apiKeys,
    openApiSchemas: openApi?.components?.schemas as Record<string, unknown> | undefined,
  };
}

// Mounted by app.ts next to /docs-json: outside the API (no policy, no OpenAPI entry), built at
// the first request, when the boot has checked the settings it reads.
export function serveAsyncApiDocument(app: INestApplication, build: () => AsyncApiDocument): void {
  let text: string | undefined;
  app.getHttpAdapter().get(ASYNCAPI_PATH, (_req: Request, res: Response) => {
    text ??= JSON.stringify(build());
    res.type('application/json');
    res.send(text);
  });
}

const ACCESS: Record<TopicAccess, string> = {
  public: 'anyone, signed in or not, hears every store\'s events',
  storeUsers: 'signed-in users and API keys of the event\'s store',
  ownerAndAdmins: 'the user named in `_owner` and the store\'s admins',
  admins: 'the store\'s admins only',
};

export function topicAccess(topic: Pick<CompiledTopic, 'accessLevel' | 'hasOwnerField'>): TopicAccess {
  if (topic.accessLevel === 'accessPublic') return 'public';
  if (topic.accessLevel === 'accessProtected') return 'storeUsers';
  return topic.hasOwnerField ? 'ownerAndAdmins' : 'admins';
}

// Keys of the document's maps are letters, digits, `.`, `-` and `_`; topic names may hold more.
function keyOf(name: string, taken: Set<string>): string {
  const base = name.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${base}_${n}`;
  taken.add(key);
  return key;
}

const messageRef = (name: string) => ({ $ref: `#/components/messages/${name}` });

// The event channel's AsyncAPI 3.0 document, from settings alone (no server needed). It
// describes a client: `receive` is what the service sends it, `send` what it sends the service.
// One channel per subscription (a Socket.IO namespace, or an SSE stream's path), with a message
// and a receive operation per topic: the packet `{ topic, name, data }` with that topic's data
// as subscribers get it, after the topic's payloadMapping and excludeFields.
export function buildAsyncApiDocument(sources: AsyncApiSources): AsyncApiDocument {
  const service = sources.serviceCodename;
  const subscriptions = compileSubscriptions(
    { eventSubscriptions: [...sources.eventSubscriptions], dataObjectAccess: [...sources.dataObjectAccess] },
    service,
  );
  const schemas = channelSchemas(sources.openApiSchemas ?? {}, sources.maxTopicsPerRequest);
  const storeHeader = `${sources.projectCodename}-store-codename`;
  const url = sources.publicUrl ? new URL(sources.publicUrl) : undefined;
  const host = url?.host ?? `localhost:${sources.port ?? 3000}`;
  const secure = url?.protocol === 'https:';
  const apiKeyAsBearer = sources.apiKeys?.enabled !== false && (sources.apiKeys?.location ?? 'bearer') === 'bearer';
  const credential = apiKeyAsBearer ? `an access token or an API key (\`sk_${sources.projectCodename}_…\`)` : 'an access token';

  const transports = new Set([...subscriptions.values()].map((s) => s.transport));
  const servers: Record<string, JsonSchema> = {};
  if (transports.has('websocket')) {
    servers.socketIo = {
      host,
      protocol: secure ? 'wss' : 'ws',
      title: 'Socket.IO',
      summary: 'The event channel over Socket.IO 4 (engine.io path `/socket.io/`).',
      description: [
        'Each websocket subscription is a Socket.IO namespace, `/events/<subscription>` (the channel\'s address). Connect with `transports: [\'websocket\']`: the connection then stays on one replica and needs no sticky sessions.',
        `The handshake names the store and the caller: \`auth: { token: 'Bearer <token>', tenantCodename: '<codename>' }\`, or the headers an HTTP call would send (\`Authorization\`, \`${storeHeader}\`), or \`_store\` in the query. Without a token a client holds public topics only.`,
        'A refused handshake is a `connect_error` whose `message` is the message code and whose `data` is `{ errCode, detail }`; a name that is no subscription gets `Invalid namespace`.',
      ].join('\n\n'),
      security: [{ $ref: '#/components/securitySchemes/bearer' }],
      'x-socketio': { version: 4, path: '/socket.io/', transports: ['websocket'] },
    };
  }
  if (transports.has('sse')) {
    servers.sse = {
      host,
      protocol: secure ? 'https' : 'http',
      title: 'Server-Sent Events',
      summary: 'The event channel as Server-Sent Events streams.',
      description: [
        'Each sse subscription is a stream: `GET /events/<subscription>/stream?topics=<name>,<name>` (the channel\'s address and its `topics` query). Its first message is `subscribed`; heartbeat comments follow every `eventChannel.heartbeatSeconds`.',
        `The caller as on any HTTP route: \`Authorization: Bearer <token>\` and the store header \`${storeHeader}\`; a browser's EventSource, which sends no headers, gives them as \`access_token\` and \`_store\` in the query. Without a token a client holds public topics only.`,
        'A refused stream is an HTTP error before it starts (the API\'s error body); a stream that ends sends `event: error` last.',
      ].join('\n\n'),
      security: [{ $ref: '#/components/securitySchemes/bearer' }, { $ref: '#/components/securitySchemes/accessTokenQuery' }],
    };
  }

  const channels: Record<string, AsyncApiChannel> = {};
  const operations: Record<string, JsonSchema> = {};
  const channelKeys = new Set<string>();
  const operationKeys = new Set<string>();
  const operation = (name: string, action: 'send' | 'receive', channel: string, messages: string[], summary: string): void => {
    operations[keyOf(name, operationKeys)] = {
      action,
      channel: { $ref: `#/channels/${channel}` },
      summary,
      messages: messages.map((m) => ({ $ref: `#/channels/${channel}/messages/${m}` })),
    };
  };

  // A name given twice (an extension's and the settings'): the last one, as the event channel.
  const settingOf = new Map(sources.eventSubscriptions.map((s) => [s.name, s]));
  for (const sub of subscriptions.values()) {
    const setting = settingOf.get(sub.name)!;
    const websocket = sub.transport === 'websocket';
    const key = keyOf(sub.name, channelKeys);
    const who = [
      sub.absoluteRoles.size ? `Its absolute roles (${[...sub.absoluteRoles].join(', ')}) receive every topic's events, unfiltered.` : '',
      sub.checkRoles ? `Only callers with one of the roles ${[...sub.checkRoles].join(', ')} may subscribe.` : '',
      sub.authScript ? 'A script decides at subscribe time which topics a caller may hold.' : '',
      sub.filterScript ? 'A script decides per event which subscribers get it.' : '',
    ].filter(Boolean);
    const messages: AsyncApiChannel['messages'] = websocket
      ? { subscribe: messageRef('subscribe'), unsubscribe: messageRef('unsubscribe'), subscribed: messageRef('subscribed'), unsubscribed: messageRef('unsubscribed'), error: messageRef('error') }
      : { subscribed: messageRef('subscribed'), error: messageRef('error') };
    const messageKeys = new Set(Object.keys(messages));
    const topicMessages: [topic: string, message: string][] = [];
    for (const topicSetting of setting.topics) {
      const topic = sub.topics.get(topicSetting.name);
      if (!topic) continue;
      const access = topicAccess(topic);
      const data = topicData(topic, topicSetting, service, schemas);
      const messageKey = keyOf(topic.name, messageKeys);
      topicMessages.push([topic.name, messageKey]);
      messages[messageKey] = {
        name: 'event',
        title: topic.name,
        ...(topicSetting.description && { summary: topicSetting.description }),
        description: `The topic \`${topic.name}\` (broker topic \`${topic.brokerTopic}\`, data object \`${topic.dataObjectName}\`): ${ACCESS[access]}.`,
        contentType: 'application/json',
        payload: {
          type: 'object',
          required: ['topic', 'name', 'data'],
          properties: { topic: { const: topic.name }, name: { const: topic.name }, data },
        },
        'x-topic': topic.name,
        'x-broker-topic': topic.brokerTopic,
        'x-data-object': topic.dataObjectName,
        'x-access': access,
        'x-access-level': topic.accessLevel,
      };
    }
    channels[key] = {
      address: websocket ? `/events/${sub.name}` : `/events/${sub.name}/stream`,
      title: sub.name,
      description: [setting.description, `${websocket ? 'A Socket.IO namespace' : 'A Server-Sent Events stream'}: topics ${[...sub.topics.keys()].map((t) => `\`${t}\``).join(', ') || 'none'}.`, ...who]
        .filter(Boolean)
        .join(' '),
      servers: [{ $ref: websocket ? '#/servers/socketIo' : '#/servers/sse' }],
      messages,
      ...(websocket && { bindings: { ws: { query: { type: 'object', properties: { _store: { type: 'string', description: 'The store\'s codename.' } } } } } }),
      'x-subscription': sub.name,
      'x-transport': sub.transport,
    };
    if (websocket) {
      operation(`${key}.send.subscribe`, 'send', key, ['subscribe'], 'Subscribe to topics; answered by `subscribed`.');
      operation(`${key}.send.unsubscribe`, 'send', key, ['unsubscribe'], 'Drop topics; answered by `unsubscribed`.');
      operation(`${key}.receive.unsubscribed`, 'receive', key, ['unsubscribed'], 'The topics dropped.');
    }
    operation(`${key}.receive.subscribed`, 'receive', key, ['subscribed'], websocket ? 'The answer to `subscribe`: the topics allowed and those rejected.' : 'The stream\'s first message: the `topics` of the query allowed and those rejected.');
    operation(`${key}.receive.error`, 'receive', key, ['error'], websocket ? 'A refused request (the socket stays), or the end of the connection (the socket is then disconnected).' : 'The end of the stream.');
    for (const [topic, message] of topicMessages) operation(`${key}.receive.${message}`, 'receive', key, [message], `Events of \`${topic}\`.`);
  }

  // Only what the document uses, the packets' schemas aside.
  const used = new Set(['SubscribeRequest', 'SubscribedPacket', 'UnsubscribedPacket', 'ErrorPacket']);
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) return value.forEach(visit);
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.slice('#/components/schemas/'.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(v);
    }
  };
  visit(channels);
  [...used].forEach((name) => visit(schemas[name]));

  const packet = (name: string, schema: string, summary: string): AsyncApiMessage => ({ name, title: name, summary, contentType: 'application/json', payload: schemaRef(schema) });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Event channel',
      version: sources.version,
      description: [
        'The service\'s live events (and its extensions\') as clients receive them, per subscription of the `eventSubscriptions` setting: over Socket.IO (`transport: websocket`) or Server-Sent Events (`transport: sse`). Built from the running settings.',
        'This document describes a client: `receive` is what the service sends it, `send` what it sends the service. Every delivery is the packet `{ topic, name, data }` (`name` is the topic\'s name too), sent as the Socket.IO event or SSE event `event`; each topic has its message with its `data` as subscribers get it. `x-access` says who receives a topic\'s events: `public` (anyone), `storeUsers` (signed-in users of the event\'s store), `ownerAndAdmins` (the user in `_owner` and the store\'s admins), `admins` (the store\'s admins).',
        'Events are transient: a client gets what is published while it is connected. Fields named like secrets (`password`, `passwordHash`, `keyHash`, `secret`, `accessToken`, …) never travel. The guide: docs/events.md.',
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    servers,
    channels,
    operations,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
      messages: {
        subscribe: packet('subscribe', 'SubscribeRequest', 'Subscribe to topics of this subscription (Socket.IO only: an SSE stream names its topics in its query).'),
        unsubscribe: packet('unsubscribe', 'SubscribeRequest', 'Drop topics (Socket.IO only).'),
        subscribed: packet('subscribed', 'SubscribedPacket', 'The topics allowed and those rejected, with the reason.'),
        unsubscribed: packet('unsubscribed', 'UnsubscribedPacket', 'The topics dropped.'),
        error: packet('error', 'ErrorPacket', '`{ message, errCode, detail }`: `message` the message code as in HTTP error bodies, `detail` a sentence.'),
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `${credential[0].toUpperCase()}${credential.slice(1)}: Socket.IO's \`auth.token\` (\`Bearer <token>\`) or the \`Authorization\` header. The store is named beside it: \`auth.tenantCodename\` or the \`${storeHeader}\` header (\`_store\` in the query). Optional: public topics need none.`,
        },
        accessTokenQuery: {
          type: 'httpApiKey',
          name: 'access_token',
          in: 'query',
          description: `${credential[0].toUpperCase()}${credential.slice(1)} in the stream's query, for a browser's EventSource (which sends no headers), with \`_store\` for the store.`,
        },
      },
    },
  };
}

// A topic's `data` as its subscribers get it: the broker event's data, or what the topic's
// payloadMapping builds of it, without the topic's excludeFields.
function topicData(topic: CompiledTopic, setting: EventSubscriptionSetting['topics'][number], service: string, schemas: Record<string, JsonSchema>): JsonSchema {
  const excluded = topic.excludeFields;
  const without = excluded.length ? ` Without ${excluded.map((f) => `\`${f}\``).join(', ')} (the topic's excludeFields).` : '';
  if (setting.payloadMapping !== undefined && setting.payloadMapping.trim() !== '') {
    const keys = mappedKeys(setting.payloadMapping)?.filter((k) => !excluded.includes(k));
    const description = `Built by the topic's payloadMapping from the event's data: ${keys ? 'its fields\' types are not known here.' : 'its shape is not known here.'}${without}`;
    return keys ? { type: 'object', description, properties: Object.fromEntries(keys.map((k) => [k, {}])) } : { type: 'object', description };
  }
  const known = knownPayload(setting.topic, topic.brokerTopic, service);
  if (!known) {
    return { type: 'object', description: `The data of the broker topic \`${topic.brokerTopic}\` as its publisher puts it: not known to the service.${without}` };
  }
  if (!excluded.length) return schemaRef(known);
  const flat = flattenObject(schemaRef(known), schemas);
  if (!flat) return { type: 'object', description: `${schemas[known]?.description ?? ''}${without}`.trim() };
  const properties = Object.fromEntries(Object.entries(flat.properties as Record<string, JsonSchema>).filter(([k]) => !excluded.includes(k)));
  return { ...flat, description: `${schemas[known]?.description ?? ''}${without}`.trim(), properties, required: (flat.required as string[]).filter((k) => !excluded.includes(k)) };
}

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import AjvModule from 'ajv';
import { ExtensionCatalogue } from '../src/kernel/extensions.js';
import { asyncApiSources, buildAsyncApiDocument, type AsyncApiDocument } from '../src/operations/asyncapi/asyncapi.js';
import { renderEventTypes } from '../src/operations/asyncapi/event-types.js';
import { buildOpenApiDocument } from '../src/operations/openapi/openapi.js';
import { projectPath } from '../src/platform/config/project-path.js';
import { connectSocket, listen, openSse, type SocketClient, type SseClient } from './event-clients.js';
import { login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type TestApp } from './helpers.js';

// The event channel's AsyncAPI document (GET /docs/asyncapi.json): built from the running
// settings, its payload schemas checked against what clients really receive, and the TypeScript
// module rendered from it compiled.

const HEADER = 'svc-store-codename';
const shipped = JSON.parse(readFileSync(projectPath('config/settings.default.json'), 'utf8')) as { eventSubscriptions: { name: string; transport: string; topics: { name: string }[] }[] };

// The shipped subscriptions, and one whose topics are shaped or whose data the service does not know.
const extra = {
  name: 'orders',
  description: 'Orders and slim users.',
  transport: 'websocket',
  topics: [
    { name: 'orderShipped', dataObjectName: 'order', topic: 'order.shipped', description: 'An order left.' },
    { name: 'slimUser', dataObjectName: 'user', topic: 'user.created', description: '', excludeFields: ['email', 'avatar'] },
    { name: 'orderTotal', dataObjectName: 'order', topic: 'order.created', description: '', payloadMapping: '{"orderId": data.id, "total": data.amount, "note": data.note}', excludeFields: ['note'] },
    { name: 'userJoined', dataObjectName: 'user', topic: 'postRegisterstoreuser:done', description: 'A user registered.' },
  ],
  auth: { absoluteRoles: [], checkRoles: ['tenantOwner'] },
};
const settings = {
  dataObjectAccess: [{ name: 'order', accessLevel: 'accessPrivate' as const, hasOwnerField: true }],
  eventSubscriptions: [...shipped.eventSubscriptions, extra],
} as never;

type Schema = Record<string, any>;

// `#/...` in the document.
function resolve(doc: unknown, ref: string): any {
  expect(ref).toMatch(/^#\//);
  return ref
    .slice(2)
    .split('/')
    .reduce<any>((node, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

// A message of a channel, or the component it refers to.
function deref(doc: unknown, node: Schema): Schema {
  return typeof node.$ref === 'string' ? deref(doc, resolve(doc, node.$ref)) : node;
}

function refs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, found));
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) k === '$ref' ? found.push(v as string) : refs(v, found);
  return found;
}

// A JSON Schema validator over the document's component schemas (AsyncAPI 3.0's default schema
// format is a JSON Schema draft 07 superset): strict, so a keyword JSON Schema does not know fails.
function validator(doc: AsyncApiDocument) {
  const Ajv = AjvModule.default;
  const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true });
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  ajv.addFormat('uri', (text: string) => URL.canParse(text));
  const local = (schema: unknown): Schema => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/definitions/'));
  ajv.addSchema({ $id: 'components', definitions: local(doc.components.schemas) });
  return (schema: unknown, value: unknown): string[] => {
    const validate = ajv.compile(local(schema));
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

function topicMessage(doc: AsyncApiDocument, channel: string, topic: string): Schema {
  const message = Object.values(doc.channels[channel].messages).find((m) => (m as Schema)['x-topic'] === topic) as Schema | undefined;
  expect(message).toBeDefined();
  return message!;
}

describe('the event channel\'s AsyncAPI document', () => {
  let t: TestApp;
  let base: string;
  let doc: AsyncApiDocument;
  const open: { close(): void }[] = [];

  beforeAll(async () => {
    t = await startApp({ settings });
    base = await listen(t);
    const res = await t.http.get('/docs/asyncapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body as AsyncApiDocument;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  it('is AsyncAPI 3.0.0, served without credentials, and every reference in it resolves', () => {
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.info.version).toBe(t.config.env.APP_VERSION);
    expect(Object.keys(doc.servers).sort()).toEqual(['socketIo', 'sse']);
    expect(doc.servers.socketIo).toMatchObject({ protocol: 'ws', host: expect.any(String) });
    expect(doc.servers.sse).toMatchObject({ protocol: 'http' });
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['accessTokenQuery', 'bearer']);
    const unresolved = [...new Set(refs(doc))].filter((ref) => resolve(doc, ref) === undefined);
    expect(unresolved).toEqual([]);
    for (const operation of Object.values(doc.operations)) {
      expect(['send', 'receive']).toContain(operation.action);
      const channel = resolve(doc, (operation.channel as Schema).$ref);
      for (const message of operation.messages as Schema[]) {
        expect(message.$ref.startsWith(`${(operation.channel as Schema).$ref}/messages/`)).toBe(true);
        expect(Object.values(channel.messages)).toContain(resolve(doc, message.$ref));
      }
    }
    for (const key of [...Object.keys(doc.channels), ...Object.keys(doc.operations), ...Object.keys(doc.components.schemas), ...Object.values(doc.channels).flatMap((c) => Object.keys(c.messages))]) {
      expect(key).toMatch(/^[A-Za-z0-9._-]+$/);
    }
  });

  it('has a channel per subscription with its transport and every topic as a message with a receive operation', () => {
    const configured = [...shipped.eventSubscriptions, extra];
    expect(Object.keys(doc.channels).sort()).toEqual(configured.map((s) => s.name).sort());
    for (const sub of configured) {
      const channel = doc.channels[sub.name];
      const websocket = sub.transport === 'websocket';
      expect(channel).toMatchObject({
        'x-subscription': sub.name,
        'x-transport': sub.transport,
        address: websocket ? `/events/${sub.name}` : `/events/${sub.name}/stream`,
        servers: [{ $ref: websocket ? '#/servers/socketIo' : '#/servers/sse' }],
      });
      const topics = Object.values(channel.messages).map((m) => (m as Schema)['x-topic']).filter(Boolean);
      expect(topics).toEqual(sub.topics.map((x) => x.name));
      const received = Object.values(doc.operations)
        .filter((o) => (o.channel as Schema).$ref === `#/channels/${sub.name}` && o.action === 'receive')
        .flatMap((o) => (o.messages as Schema[]).map((m) => deref(doc, m)));
      for (const topic of sub.topics) expect(received).toContainEqual(expect.objectContaining({ 'x-topic': topic.name, name: 'event' }));
      // Socket.IO clients send subscribe / unsubscribe; an SSE stream names its topics in its query.
      const sent = Object.values(doc.operations).filter((o) => (o.channel as Schema).$ref === `#/channels/${sub.name}` && o.action === 'send');
      expect(sent.flatMap((o) => (o.messages as Schema[]).map((m) => deref(doc, m).name)).sort()).toEqual(websocket ? ['subscribe', 'unsubscribe'] : []);
    }
  });

  it('says who receives each topic', () => {
    expect(topicMessage(doc, 'live', 'storeCreated')).toMatchObject({ 'x-access': 'public', 'x-data-object': 'store', 'x-broker-topic': 'auth-store-created' });
    expect(topicMessage(doc, 'live-sse', 'userCreated')).toMatchObject({ 'x-access': 'storeUsers', 'x-access-level': 'accessProtected' });
    expect(topicMessage(doc, 'live', 'apiKeyCreated')).toMatchObject({ 'x-access': 'ownerAndAdmins' });
    expect(topicMessage(doc, 'live', 'sessionEnded')).toMatchObject({ 'x-access': 'ownerAndAdmins', payload: { properties: { data: { $ref: '#/components/schemas/SessionEndedData' } } } });
    expect(topicMessage(doc, 'console-audit', 'user.login.failed')).toMatchObject({ 'x-access': 'admins', payload: { properties: { data: { $ref: '#/components/schemas/AuditEntryData' } } } });
    expect(doc.channels.orders.description).toContain('tenantOwner');
  });

  it('gives each topic\'s data as subscribers get it: without excluded fields, mapped, or unknown', () => {
    const data = (topic: string): Schema => topicMessage(doc, 'orders', topic).payload.properties.data;
    const slim = data('slimUser');
    expect(Object.keys(slim.properties)).toEqual(expect.arrayContaining(['id', 'storeId', '_owner', 'fullname']));
    expect(slim.properties).not.toHaveProperty('email');
    expect(slim.properties).not.toHaveProperty('avatar');
    expect(slim.required).not.toContain('avatar');
    expect(Object.keys(data('orderTotal').properties)).toEqual(['orderId', 'total']);
    expect(data('orderShipped')).toEqual({ type: 'object', description: expect.stringMatching(/not known/) });
  });

  it('describes what a client really receives: a user-created event over Socket.IO and SSE validates against its schema', async () => {
    const check = validator(doc);
    const store = await registerStore(t.http);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const socket: SocketClient = await connectSocket(base, 'live', { token: `Bearer ${owner.accessToken}`, tenantCodename: store.codename });
    open.push(socket);
    socket.socket.emit('subscribe', { topics: ['userCreated', 'nothing'] });
    const subscribed = await socket.next('subscribed');
    expect(check(doc.components.messages.subscribed.payload, subscribed)).toEqual([]);
    const stream: SseClient = await openSse(base, '/events/live-sse/stream?topics=userCreated', { Authorization: `Bearer ${owner.accessToken}`, [HEADER]: store.codename });
    open.push(stream);
    expect(check(doc.components.messages.subscribed.payload, await stream.next('subscribed'))).toEqual([]);

    const orders: SocketClient = await connectSocket(base, 'orders', { token: `Bearer ${owner.accessToken}`, tenantCodename: store.codename });
    open.push(orders);
    orders.socket.emit('subscribe', { topics: ['userJoined', 'slimUser'] });
    expect(await orders.next('subscribed')).toEqual({ topics: ['userJoined', 'slimUser'], rejected: [] });

    const email = uniqueEmail();
    const created = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Store User' }).expect(201);
    const viaSocket = await waitFor('the socket\'s event', () => socket.events().find((e) => e.data.id === created.body.user.id));
    const viaSse = await waitFor('the stream\'s event', () => stream.events().find((e) => e.data.id === created.body.user.id));
    expect(viaSse).toEqual(viaSocket);
    expect(viaSocket.data).toMatchObject({ email, storeId: store.storeId });

    for (const [channel, packet] of [['live', viaSocket], ['live-sse', viaSse]] as const) {
      const message = topicMessage(doc, channel, 'userCreated');
      expect(check(message.payload, packet)).toEqual([]);
      expect(check(message.payload.properties.data, packet.data)).toEqual([]);
      // The check can fail: a required field missing, a field of the wrong type, another topic's packet.
      const { storeId: _storeId, ...withoutStore } = packet.data;
      expect(check(message.payload.properties.data, withoutStore)).toEqual([expect.stringContaining('storeId')]);
      expect(check(message.payload.properties.data, { ...packet.data, isActive: 'yes' })).toEqual([expect.stringContaining('/isActive')]);
      expect(check(message.payload, { ...packet, topic: 'storeCreated' })).not.toEqual([]);
    }

    // Other topics' data: an API's completion event, and a user without its excluded fields.
    const joined = await waitFor('the completion event', () => orders.events().find((e) => e.topic === 'userJoined'));
    expect(joined.data).toMatchObject({ storeId: store.storeId, method: 'POST', statusCode: 201 });
    expect(topicMessage(doc, 'orders', 'userJoined').payload.properties.data).toEqual({ $ref: '#/components/schemas/ApiDoneData' });
    expect(check(topicMessage(doc, 'orders', 'userJoined').payload, joined)).toEqual([]);
    const slim = await waitFor('the slim user', () => orders.events().find((e) => e.topic === 'slimUser' && e.data.id === created.body.user.id));
    expect(slim.data).not.toHaveProperty('email');
    expect(check(topicMessage(doc, 'orders', 'slimUser').payload, slim)).toEqual([]);

    // The same store's registration, over the public topic.
    socket.socket.emit('subscribe', { topics: ['storeCreated'] });
    await socket.next('subscribed');
    const other = await registerStore(t.http);
    const storeEvent = await waitFor('the store event', () => socket.events().find((e) => e.topic === 'storeCreated' && e.data.id === other.storeId));
    expect(check(topicMessage(doc, 'live', 'storeCreated').payload, storeEvent)).toEqual([]);
  });

  it('is what buildAsyncApiDocument writes without a listening server, from the same sources', () => {
    const built = buildAsyncApiDocument(asyncApiSources(t.config, t.app.get(ExtensionCatalogue), buildOpenApiDocument(t.app, t.config)));
    expect(JSON.parse(JSON.stringify(built))).toEqual(doc);
  });

  it('renders a TypeScript module of the topics\' payloads and packets that compiles', () => {
    const text = renderEventTypes(doc);
    expect(text).toMatch(/export interface TopicPayloads \{[^]*\n {2}userCreated: UserData;/);
    expect(text).toContain('export type EventPacket<');
    expect(text).toContain('export type SubscribedPacket');
    expect(text).toContain('export type ErrorPacket');
    expect(text).toContain('export const SUBSCRIPTIONS = [');
    const dir = mkdtempSync(join(tmpdir(), 'svc-event-types-'));
    try {
      writeFileSync(join(dir, 'event-types.ts'), text);
      // What a client writes with it; the wrong lines must fail to compile.
      writeFileSync(
        join(dir, 'client.ts'),
        `import { SUBSCRIPTIONS, type EventPacket, type ErrorPacket, type SubscribedPacket, type SubscriptionPayloads, type TopicPayloads } from './event-types.js';
const live = SUBSCRIPTIONS.find((s) => s.name === 'live');
export const transport: 'websocket' | 'sse' | undefined = live?.transport;
export function onEvent(packet: EventPacket): string {
  if (packet.topic === 'userCreated') return packet.data.storeId + String(packet.data.email ?? '');
  if (packet.topic === 'sessionEnded') return packet.data.sessionIds.join(',');
  if (packet.topic === 'user.login.failed') return packet.data.entry.action;
  return packet.name;
}
export const reasons = (p: SubscribedPacket): string[] => p.rejected.map((r) => r.reason);
export const say = (e: ErrorPacket): string => e.message + e.errCode + (e.detail ?? '');
export const total = (d: SubscriptionPayloads['orders']['orderTotal']): unknown => d.total;
// @ts-expect-error a topic no subscription has
export const missing: TopicPayloads['noSuchTopic'] = {};
// @ts-expect-error the user's id is a string
export const wrong: EventPacket<'userCreated'> = { topic: 'userCreated', name: 'userCreated', data: { id: 1 } };
`,
      );
      const tsc = spawnSync(process.execPath, [projectPath('node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--target', 'es2023', '--module', 'nodenext', join(dir, 'client.ts')], { cwd: dir, encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the AsyncAPI document follows the running settings', () => {
  it('another eventSubscriptions, another document', async () => {
    const t = await startApp({
      settings: { eventSubscriptions: [{ name: 'feed', description: 'Stores only.', transport: 'sse', topics: [{ name: 'stores', dataObjectName: 'store', topic: 'store.created', description: '' }], auth: { absoluteRoles: [] } }] } as never,
    });
    try {
      const doc = (await t.http.get('/docs/asyncapi.json').expect(200)).body as AsyncApiDocument;
      expect(Object.keys(doc.channels)).toEqual(['feed']);
      expect(doc.channels.feed).toMatchObject({ 'x-transport': 'sse', address: '/events/feed/stream' });
      expect(Object.keys(doc.servers)).toEqual(['sse']);
      expect(topicMessage(doc, 'feed', 'stores')).toMatchObject({ 'x-access': 'public', payload: { properties: { data: { $ref: '#/components/schemas/StoreCreatedData' } } } });
      expect(renderEventTypes(doc)).toMatch(/SUBSCRIPTIONS = \[\n {2}\{ name: "feed", transport: "sse", topics: \["stores"\] \},\n\]/);
    } finally {
      await t.close();
    }
  });

  it('is not served when the API docs are not', async () => {
    const t = await startApp({ env: { DOCS_ENABLED: 'false' } });
    try {
      expect((await t.http.get('/docs-json')).status).toBe(404);
      expect((await t.http.get('/docs/asyncapi.json')).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});

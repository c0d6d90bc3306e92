import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { PolicyAudit } from '../src/kernel/policy-audit.js';
import { login, registerStore, startApp, type RegisteredStore, type TestApp } from './helpers.js';

// Property: whatever a client sends to any route (body, query, path), the answer is never a 5xx.
// Routes come from the running app, so a route added later is fuzzed without touching this file.
// Replay a failure with FUZZ_SEED=<seed printed by fast-check>; FUZZ_RUNS sets the case count.
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);

const MEGABYTE = 'x'.repeat(1 << 20);
// Names the routes read, so generated bodies and queries reach past "unknown field".
const FIELDS = [
  'email', 'password', 'fullname', 'name', 'surname', 'avatar', 'mobile', 'roleId', 'isActive', 'store', 'username',
  'expiresAt', 'roles', 'permissions', 'apiKey', '_store', 'pageNumber', 'pageRowCount', 'currentPassword', 'socialCode',
  'keyId', 'id', 'file', 'access_token',
];

const nasty = fc.constantFrom(
  '\ud800', 'a\udc00b', '\udfff\ud800', 'x\ud800@example.com', 'ada@example.com\ud83d', '\u0000', 'a\u0000b', '', ' ', '%', '%zz',
  '%ED%A0%80', '__proto__', 'constructor', '../../etc/passwd', 'null', 'true', '-1', '0', '1e309', 'NaN', 'sk_svc_' + '0'.repeat(48),
  'ada@example.com', '+14155552671', '2020-01-01T00:00:00Z', 'https://example.com/a.png', 'tenantOwner', 'superAdmin', MEGABYTE,
);
const text = fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) }, { weight: 2, arbitrary: nasty });
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1, 2 ** 53, -(2 ** 31), 1e308));
const scalar = fc.oneof(text, number, fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: 'small', withCrossShrink: true }, { weight: 5, arbitrary: scalar }, tie('array'), tie('object')),
  array: fc.array(tie('any'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), text), tie('any'), { maxKeys: 4 }),
})).any;
const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FIELDS) }, { weight: 1, arbitrary: text });
const query = fc.array(fc.tuple(key, fc.oneof(text, number.map(String))), { maxLength: 4 });

// Values a route accepts, by field name, so that one bad field at a time reaches deep code.
const VALID: Record<string, fc.Arbitrary<unknown>> = {
  email: fc.uuid().map((u) => `f${u.slice(0, 8)}@example.com`),
  password: fc.constant('correct horse battery'),
  currentPassword: fc.constant('correct horse battery'),
  fullname: fc.constant('Fuzz Person'),
  name: fc.constant('Fuzz'),
  surname: fc.constant('Person'),
  avatar: fc.constant('https://example.com/a.png'),
  mobile: fc.constant('+14155552671'),
  roleId: fc.constantFrom('tenantUser', 'tenantAdmin'),
  isActive: fc.boolean(),
  store: fc.uuid().map((u) => ({ name: `Fuzz ${u.slice(0, 8)}` })),
  expiresAt: fc.constant('2099-01-01T00:00:00Z'),
  roles: fc.constant(['tenantUser']),
  pageNumber: fc.constant(1),
  pageRowCount: fc.constant(5),
};
const mutation = fc.oneof({ weight: 3, arbitrary: nasty }, { weight: 2, arbitrary: text }, number, fc.boolean(), { weight: 2, arbitrary: fc.constant(null) }, value);
// The sweep's bad values: one of each kind.
const SWEEP_VALUES: unknown[] = [null, '\ud800', 'a\u0000b', '', 12.5, -1, true, [], {}, MEGABYTE.slice(0, 90_000)];

// The route's body fields: from the OpenAPI document when it names them, else the common ones.
// Mostly a valid body with one field made bad, so each bad value reaches the code behind the
// validation of the others.
function bodyFor(fields: string[]): fc.Arbitrary<{ json: string } | { raw: string; type: string } | undefined> {
  const named = fields.length ? fields : FIELDS;
  const shaped = fc
    .record({
      valid: fc.tuple(...named.map((f) => fc.option(VALID[f] ?? text, { nil: undefined, freq: 2 }))),
      bad: fc.option(fc.tuple(fc.constantFrom(...named), mutation), { nil: undefined, freq: 6 }),
      extra: fc.option(fc.tuple(key, value), { nil: undefined, freq: 8 }),
    })
    .map(({ valid, bad, extra }) => {
      const o: Record<string, unknown> = {};
      named.forEach((f, i) => valid[i] !== undefined && (o[f] = valid[i]));
      for (const [k, v] of [bad ?? [], extra ?? []]) if (k !== undefined && k !== '__proto__') o[k] = v;
      return { json: JSON.stringify(o) };
    });
  return fc.oneof(
    { weight: 8, arbitrary: shaped },
    { weight: 1, arbitrary: value.map((v) => ({ json: JSON.stringify(v) ?? 'null' })) },
    { weight: 1, arbitrary: fc.tuple(text, fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded')).map(([raw, type]) => ({ raw, type })) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

type OpenApi = { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> } }>>; components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> } };

function bodyFields(doc: OpenApi, method: string, path: string): string[] {
  const op = doc.paths[path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[method.toLowerCase()];
  const ref = op?.requestBody?.content?.['application/json']?.schema?.$ref;
  const schema = ref ? doc.components?.schemas?.[ref.split('/').pop()!] : undefined;
  return Object.keys(schema?.properties ?? {});
}

// Percent-encodes anything, lone surrogates included (as their WTF-8 bytes), which
// encodeURIComponent refuses: the server must cope with what a raw client can send.
function encode(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => '%' + b.toString(16).toUpperCase()).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

interface Answer {
  status: number;
  text: string;
}

function send(server: Server, method: string, path: string, headers: Record<string, string>, payload?: string): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(payload !== undefined && { 'content-length': String(Buffer.byteLength(payload)) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8').slice(0, 500) }));
    });
    // The server may answer and close before reading a large body.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? resolve({ status: 0, text: error.code }) : reject(error)));
    req.end(payload);
  });
}

describe('fuzz: no input makes any route answer 5xx', () => {
  let t: TestApp;
  let server: Server;
  let store: RegisteredStore;
  let token: string;
  let apiKey: string;
  let other: string;
  let routes: { method: string; path: string; fields: string[] }[];

  beforeAll(async () => {
    t = await startApp();
    server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    store = await registerStore(t.http);
    token = (await login(t.http, store.ownerEmail, undefined, store.codename)).accessToken;
    apiKey = (await t.http.post('/auth-api/v1/apikeys').set('authorization', `Bearer ${token}`).set('svc-store-codename', store.codename).send({ name: 'fuzz' }).expect(201)).body.apiKey.key;
    other = (await t.http.post('/auth-api/users').set('authorization', `Bearer ${token}`).set('svc-store-codename', store.codename).send({ email: `o${store.codename}@example.com`, password: 'correct horse battery', fullname: 'Other' }).expect(201)).body.user.id;
    const doc = SwaggerModule.createDocument(t.app, new DocumentBuilder().build()) as unknown as OpenApi;
    routes = t.app.get(PolicyAudit).routes().map((r) => ({ ...r, fields: bodyFields(doc, r.method, r.path) }));
  });

  afterAll(async () => {
    await t?.close();
  });

  it('knows the routes it fuzzes', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes).toContainEqual(expect.objectContaining({ method: 'PATCH', path: '/auth-api/v1/users/:id' }));
  });

  it(`${RUNS} random requests (seed ${SEED}) all answer below 500`, async () => {
    // Routes that take a body are drawn more often: they have more to get wrong.
    const request = fc.oneof(
      ...routes.map((r) => ({ weight: ['POST', 'PATCH', 'PUT'].includes(r.method) ? 3 : 1, arbitrary: fc.tuple(fc.constant(r), bodyFor(r.fields)) })),
    );
    // Ids that exist reach deeper code than random ones: the owner, another user, the store.
    const param = fc.oneof(text, fc.constantFrom(store.ownerId, other, store.storeId, '00000000-0000-0000-0000-000000000000'));
    const auth = fc.constantFrom('owner', 'owner', 'owner', 'none', 'apiKey', 'garbage');
    const target = fc.constantFrom('own', 'own', 'own', 'none', 'other');

    await fc.assert(
      fc.asyncProperty(request, param, query, auth, target, async ([r, b], p, q, a, s) => {
        await expectBelow500({ route: r, param: p, query: q, body: b, auth: a, target: s });
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 120_000);

  // Systematic part: every body field of every route, alone and in an otherwise valid body, with
  // one value of each bad kind, as the store's owner on the real ids.
  it('every body field with each kind of bad value answers below 500', async () => {
    let cases = 0;
    for (const route of routes.filter((r) => r.fields.length)) {
      const params = route.path.includes(':') ? [store.ownerId, other] : [''];
      const valid = Object.fromEntries(route.fields.filter((f) => VALID[f]).map((f) => [f, fc.sample(VALID[f], { seed: 1, numRuns: 1 })[0]]));
      for (const field of route.fields) {
        for (const bad of SWEEP_VALUES) {
          for (const base of [{}, valid]) {
            for (const param of params) {
              await expectBelow500({ route, param, query: [], body: { json: JSON.stringify({ ...base, [field]: bad }) }, auth: 'owner', target: 'own' });
              cases++;
            }
          }
        }
      }
    }
    expect(cases).toBeGreaterThan(500);
  }, 120_000);

  async function expectBelow500(c: { route: { method: string; path: string }; param: string; query: [string, string][]; body: { json: string } | { raw: string; type: string } | undefined; auth: string; target: string }): Promise<void> {
    const { route: r, body: b } = c;
    const path = r.path.replace(/:[A-Za-z]+/g, () => encode(c.param));
    const qs = c.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
    const headers: Record<string, string> = {};
    // The session is kept: ending it (logout, DELETE /sessions) would leave the rest anonymous.
    const ends = r.path === '/auth-api/logout' || (r.method === 'DELETE' && r.path.startsWith('/auth-api/sessions'));
    if (c.auth === 'owner' && !ends) headers.authorization = `Bearer ${token}`;
    if (c.auth === 'apiKey') headers.authorization = `Bearer ${apiKey}`;
    if (c.auth === 'garbage') headers.authorization = 'Bearer eyJhbGciOiJub25lIn0.e30.';
    if (c.target === 'own') headers['svc-store-codename'] = store.codename;
    if (c.target === 'other') headers['svc-store-codename'] = 'root';
    let payload: string | undefined;
    if (b && 'json' in b) {
      headers['content-type'] = 'application/json';
      payload = b.json;
    } else if (b) {
      headers['content-type'] = b.type;
      payload = b.raw;
    }
    const res = await send(server, r.method, qs ? `${path}?${qs}` : path, headers, payload);
    if (res.status >= 500) throw new Error(`${r.method} ${path}${qs ? '?' + qs : ''} answered ${res.status}: ${res.text}\nbody: ${payload?.slice(0, 300)}`);
  }
});

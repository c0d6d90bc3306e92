import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { PolicyAudit } from '../src/kernel/policy-audit.js';
import { login, PASSWORD, registerStore, startApp, SUPER_ADMIN, unique, type TestApp } from './helpers.js';

type Doc = {
  info: { title: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};
type Operation = {
  tags?: string[];
  security?: unknown[];
  requestBody?: { required?: boolean };
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, { $ref?: string; headers?: Record<string, { description?: string }>; content?: Record<string, { schema?: unknown }> }>;
};

const METHODS = ['get', 'post', 'patch', 'put', 'delete'];

describe('the OpenAPI document', () => {
  let t: TestApp;
  let doc: Doc;
  const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
  beforeAll(async () => {
    t = await startApp();
    doc = (await t.http.get('/docs-json').expect(200)).body as Doc;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op })));

  // In a plain Node process: swagger-parser require()s an ESM package, which Jest cannot on Node 20.
  async function validate(document: unknown): Promise<string> {
    const file = join(dir, `${unique('doc')}.json`);
    writeFileSync(file, JSON.stringify(document));
    const script = "import P from '@apidevtools/swagger-parser'; try { await P.validate(process.argv[1]); console.log('valid') } catch (e) { console.log(e.message) }";
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, file]);
    return stdout.trim();
  }

  it('is valid OpenAPI 3 for a real validator (@apidevtools/swagger-parser)', async () => {
    expect(await validate(doc)).toBe('valid');
  });

  it('the validator refuses a path parameter left out (the check can fail)', async () => {
    const broken = structuredClone(doc);
    const op = broken.paths['/auth-api/v1/users/{id}'].get;
    op.parameters = op.parameters!.filter((p) => p.name !== 'id');
    expect(await validate(broken)).toMatch(/id/);
  });

  it('documents every route the service serves', () => {
    const documented = operations().map(({ path, method }) => `${method.toUpperCase()} ${path}`).sort();
    const served = t.app.get(PolicyAudit).routes().map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`).sort();
    expect(documented).toEqual(served);
  });

  it('gives every operation a success schema, its error answers, every path parameter and its security', () => {
    const publicRoutes = new Set(t.app.get(PolicyAudit).routes().filter((r) => r.policy === 'public').map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`));
    for (const { path, method, op } of operations()) {
      const name = `${method} ${path}`;
      // A success schema, or for a redirecting route (social login, SSO) its 302 with Location.
      const success = Object.entries(op.responses).find(([s]) => s.startsWith('2'));
      const redirect = op.responses['302'] as { headers?: Record<string, unknown> } | undefined;
      const described = redirect ? redirect.headers?.Location !== undefined : Object.values(success?.[1].content ?? {}).some((c) => c.schema);
      expect([name, described]).toEqual([name, true]);
      expect([name, op.responses['500']?.$ref]).toEqual([name, '#/components/responses/Error500']);
      for (const [, param] of path.matchAll(/\{([^}]+)\}/g)) {
        expect([name, op.parameters?.some((p) => p.in === 'path' && p.name === param)]).toEqual([name, true]);
      }
      expect([name, Array.isArray(op.security)]).toEqual([name, true]);
      if (publicRoutes.has(name)) expect([name, op.security]).toEqual([name, []]);
      else expect([name, op.security!.length > 0, op.responses['401'] !== undefined]).toEqual([name, true, true]);
    }
  });

  it('lists 401 with the error body on the public routes whose main failure is one: login and the realtime webhook', async () => {
    const error401 = (doc.components as { responses?: Record<string, { content: Record<string, { schema: unknown }> }> }).responses?.Error401;
    expect(error401?.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    const codes = (doc.components.schemas.ErrorBody as { properties: { errCode: { enum: string[] } } }).properties.errCode.enum;
    for (const [path, errCode] of [['/auth-api/login', 'InvalidCredentials'], ['/auth-api/realtime/webhook', 'RealtimeWebhookInvalid']]) {
      const op = doc.paths[path].post;
      expect([path, op.security]).toEqual([path, []]);
      expect([path, op.responses['401']]).toEqual([path, { $ref: '#/components/responses/Error401' }]);
      expect([path, codes]).toEqual([path, expect.arrayContaining([errCode])]);
    }
    // what login really answers for a wrong password
    const refused = await t.http.post('/auth-api/login').send({ username: 'nobody@example.com', password: 'not the password' });
    expect({ status: refused.status, errCode: refused.body.errCode }).toEqual({ status: 401, errCode: 'InvalidCredentials' });
  });

  it('names the security schemes: bearer token, cookie, API key, machine token', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['accessToken', 'accessTokenCookie', 'apiKey', 'machineToken']);
    expect(doc.paths['/auth-api/v1/users'].get.security).toEqual([{ accessToken: [] }, { accessTokenCookie: [] }, { apiKey: [] }]);
    expect(doc.paths['/auth-api/validateapikey'].post.security).toEqual([{ machineToken: [] }]);
    // Anyone may call it when userRegisterIsPublic: credentials are optional.
    expect(doc.paths['/auth-api/users'].post.security).toContainEqual({});
  });

  it('the API key scheme describes an opaque sk_svc_ key, not a JWT; the access token is one', () => {
    const apiKey = doc.components.securitySchemes.apiKey as { scheme: string; bearerFormat?: string; description: string };
    expect(apiKey.scheme).toBe('bearer');
    expect(apiKey.bearerFormat).not.toMatch(/JWT/i);
    expect(apiKey.bearerFormat).toMatch(/^sk_svc_/);
    expect(apiKey.description).toMatch(/opaque/);
    expect(apiKey.description).toContain('`sk_svc_`');
    expect(doc.components.securitySchemes.accessToken).toMatchObject({ scheme: 'bearer', bearerFormat: 'JWT' });
  });

  it('logout and refresh take an optional body, and the service answers them without one', async () => {
    for (const path of ['/auth-api/logout', '/auth-api/refresh']) expect([path, doc.paths[path].post.requestBody?.required]).toEqual([path, false]);
    // Bodies that are needed stay required.
    expect(doc.paths['/auth-api/login'].post.requestBody?.required).toBe(true);
    const store = await registerStore(t.http);
    const { accessToken } = await login(t.http, store.ownerEmail, undefined, store.codename);
    const ended = await t.http.post('/auth-api/logout').set('svc-store-codename', store.codename).set('Authorization', `Bearer ${accessToken}`).expect(200);
    expect(ended.body).toEqual({ status: 'OK', message: 'Logged out' });
    await t.http.post('/auth-api/logout').expect(200);
  });

  it('documents the access-token header on the answers of every route that signs in, as login sends it', async () => {
    const documented = operations()
      .filter(({ op }) => op.responses['200']?.headers?.['svc-access-token-{codename}'])
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(documented).toEqual([
      'POST /auth-api/auth/social-login-result',
      'POST /auth-api/login',
      'POST /auth-api/mfa/recovery',
      'POST /auth-api/mfa/totp/verify',
      'POST /auth-api/passkeys/login/verify',
      'POST /auth-api/passwordless/complete',
      'POST /auth-api/refresh',
      'POST /auth-api/verification-services/email-2factor-verification/complete',
      'POST /auth-api/verification-services/mobile-2factor-verification/complete',
    ]);
    const headers = doc.paths['/auth-api/login'].post.responses['200'].headers!;
    expect(Object.keys(headers).sort()).toEqual(['Set-Cookie', 'svc-access-token', 'svc-access-token-{codename}']);
    // Where it depends on the settings, the document says when.
    expect(doc.paths['/auth-api/mfa/totp/verify'].post.responses['200'].headers!['svc-access-token-{codename}'].description).toMatch(/accessTokenMinutes/);
    // What login really sends: in a store, the header named after its codename; at root, the plain name.
    const store = await registerStore(t.http);
    const inStore = await t.http.post('/auth-api/login').set('svc-store-codename', store.codename).send({ username: store.ownerEmail, password: PASSWORD }).expect(200);
    expect(inStore.headers[`svc-access-token-${store.codename}`]).toBe(inStore.body.accessToken);
    const root = await t.http.post('/auth-api/login').send(SUPER_ADMIN).expect(200);
    expect(root.headers['svc-access-token']).toBe(root.body.accessToken);
  });

  it('opens with a description: what the service is, how to name a store, how to authenticate, where the guides are', () => {
    const text = doc.info.description ?? '';
    expect(text.length).toBeGreaterThan(200);
    expect(text).toContain('`svc-store-codename`');
    expect(text).toContain('Authorization: Bearer');
    expect(text).toContain('POST /auth-api/login');
    expect(text).toMatch(/API key/);
    expect(text).toContain('docs/');
  });

  it('lists the tags in a newcomer\'s order, each described, operations last; every tag in use is listed', () => {
    const names = (doc.tags ?? []).map((tag) => tag.name);
    expect(names.slice(0, 4)).toEqual(['stores', 'registration', 'auth', 'users']);
    expect(names.at(-1)).toBe('operations');
    for (const tag of doc.tags ?? []) expect([tag.name, (tag.description ?? '').length > 10]).toEqual([tag.name, true]);
    const used = new Set(operations().flatMap(({ op }) => op.tags ?? []));
    expect([...used].sort()).toEqual([...names].sort());
  });

  it('describes the envelope and the error body the service really sends', async () => {
    const envelope = doc.paths['/auth-api/v1/briefstores'].get.responses['200'].content!['application/json'].schema;
    expect(envelope).toEqual({
      allOf: [{ $ref: '#/components/schemas/Envelope' }, expect.objectContaining({ properties: { stores: { type: 'array', items: { $ref: '#/components/schemas/BriefStoreResponse' } } } })],
    });
    const envelopeSchema = doc.components.schemas.Envelope as { required: string[] };
    const real = (await t.http.get('/auth-api/v1/briefstores').expect(200)).body as Record<string, unknown>;
    for (const key of envelopeSchema.required) expect([key, key in real]).toEqual([key, true]);
    const errorSchema = doc.components.schemas.ErrorBody as { required: string[]; properties: { errCode: { enum: string[] }; message: { pattern: string } } };
    const error = (await t.http.get('/auth-api/v1/briefstores').set('svc-store-codename', unique('nostore')).expect(400)).body as Record<string, string>;
    for (const key of errorSchema.required) expect([key, key in error]).toEqual([key, true]);
    expect(errorSchema.properties.errCode.enum).toContain(error.errCode);
    // Every key the service sends is described: the message code and the sentence apart.
    for (const key of Object.keys(error)) expect([key, key in errorSchema.properties]).toEqual([key, true]);
    expect(error.message).toMatch(new RegExp(errorSchema.properties.message.pattern));
    expect(error.detail).toEqual(expect.any(String));
  });

  it('describes the verification flows and the SSE stream with their answers', () => {
    const start = doc.paths['/auth-api/verification-services/{flow}/start'].post;
    expect(start.responses['200'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/StartAnswer' });
    expect(Object.keys(start.responses)).toEqual(expect.arrayContaining(['403', '404', '429']));
    expect(doc.paths['/auth-api/verification-services/{flow}/complete'].post.responses['200'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/CompleteAnswer' });
    const twoFactor = doc.paths['/auth-api/verification-services/email-2factor-verification/complete'].post;
    // the session, and with refresh tokens on the fresh pair
    expect(twoFactor.responses['200'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/SecondFactorDoneResponse' });
    expect(Object.keys((doc.components!.schemas!.SecondFactorDoneResponse as { properties: object }).properties)).toEqual(expect.arrayContaining(['sessionId', 'refreshToken', 'accessTokenExpiresAt']));
    const stream = doc.paths['/events/{name}/stream'].get;
    expect(Object.keys(stream.responses['200'].content!)).toEqual(['text/event-stream']);
    expect(stream.parameters!.map((p) => `${p.in} ${p.name}`)).toEqual(expect.arrayContaining(['path name', 'query topics', 'query access_token']));
    expect(Object.keys(stream.responses)).toEqual(expect.arrayContaining(['401', '403', '404']));
  });

  it('documents the authenticator-app routes, their answers and failures', () => {
    const schemaOf = (op: { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }) => op.responses['200'].content!['application/json'].schema;
    expect(schemaOf(doc.paths['/auth-api/mfa'].get)).toEqual({ $ref: '#/components/schemas/MfaFactorsResponse' });
    expect(Object.keys((doc.components!.schemas!.MfaFactorsResponse as { properties: object }).properties).sort()).toEqual(['passkeys', 'recoveryCodesLeft', 'totp']);
    expect(schemaOf(doc.paths['/auth-api/mfa/totp/setup'].post)).toEqual({ $ref: '#/components/schemas/TotpSetupResponse' });
    expect(schemaOf(doc.paths['/auth-api/mfa/totp/confirm'].post)).toEqual({ $ref: '#/components/schemas/TotpConfirmedResponse' });
    expect(schemaOf(doc.paths['/auth-api/mfa/recovery/regenerate'].post)).toEqual({ $ref: '#/components/schemas/RecoveryCodesResponse' });
    for (const path of ['/auth-api/mfa/totp/verify', '/auth-api/mfa/recovery']) {
      const op = doc.paths[path].post;
      expect(schemaOf(op)).toEqual({ $ref: '#/components/schemas/SecondFactorDoneResponse' });
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '429']));
      expect(op.requestBody).toBeDefined();
    }
    expect(doc.paths['/auth-api/mfa/totp'].delete.requestBody).toBeDefined();
    expect(schemaOf(doc.paths['/auth-api/v1/users/{id}/mfa'].delete)).toEqual({ $ref: '#/components/schemas/SessionsEndedResponse' });
    expect(Object.keys((doc.components!.schemas!.SessionResponse as { properties: object }).properties)).toEqual(expect.arrayContaining(['sessionNeedsTotp2FA', 'mfaEnrollmentNeeded']));
  });

  describe('a typed client generated from it (openapi-typescript)', () => {
    // Registers a store, logs in and reads the current user, with types from the document only.
    const program = `
import type { paths } from './api.js';

type Body<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Ok<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer R } } } } ? R : never;

async function call<T>(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(method + ' ' + path + ' answered ' + res.status);
  return (await res.json()) as T;
}

export async function main(base: string, email: string): Promise<void> {
  const registration: Body<'/auth-api/v1/registerstoreowner', 'post'> = { email, password: 'correct horse battery', fullname: 'Typed Client', store: { name: 'Typed Client Store' } };
  const registered = await call<Ok<'/auth-api/v1/registerstoreowner', 'post', 201>>(base, 'POST', '/auth-api/v1/registerstoreowner', {}, registration);
  const codename: string = registered.store.codename;
  const userId: string = registered.user.id;
  const credentials: Body<'/auth-api/login', 'post'> = { username: email, password: 'correct horse battery' };
  const session = await call<Ok<'/auth-api/login', 'post', 200>>(base, 'POST', '/auth-api/login', { 'svc-store-codename': codename }, credentials);
  const token: string = session.accessToken;
  const me = await call<Ok<'/auth-api/currentuser', 'get', 200>>(base, 'GET', '/auth-api/currentuser', { authorization: 'Bearer ' + token, 'svc-store-codename': codename });
  const same: boolean = me.userId === userId && me.tenantId === registered.store.id;
  process.stdout.write(JSON.stringify({ codename, userId: me.userId, email: me.email, same }));
}

await main(process.argv[2], process.argv[3]);
`;

    function typeErrors(files: Record<string, string>): string[] {
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      const options: ts.CompilerOptions = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2023, types: ['node'], typeRoots: [join(process.cwd(), 'node_modules/@types')], skipLibCheck: true };
      const host = ts.createProgram(Object.keys(files).map((f) => join(dir, f)), options);
      return ts.getPreEmitDiagnostics(host).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    }

    let types: string;
    beforeAll(async () => {
      types = astToString(await openapiTS(structuredClone(doc) as never));
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
    });

    it('type-checks a program that registers, logs in and reads the current user', () => {
      expect(typeErrors({ 'api.ts': types, 'client.ts': program })).toEqual([]);
    });

    it('catches a program that misreads the answers (the check can fail)', () => {
      const wrong = program.replace('const token: string = session.accessToken;', 'const token: number = session.accessToken;').replace("{ username: email, password: 'correct horse battery' }", '{ username: email, passwrd: 1 }');
      const errors = typeErrors({ 'api.ts': types, 'client.ts': wrong });
      expect(errors.join('\n')).toMatch(/not assignable to type 'number'/);
      expect(errors.join('\n')).toMatch(/passwrd/);
    });

    // The browser's part (navigator.credentials) cannot run here: passkeys-browser.e2e-spec.ts runs it.
    it('types the passkey calls: the options for the browser, the credential to verify, the passkey and the login they give', () => {
      const passkeys = `
import type { paths } from './api.js';

type Body<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Ok<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer R } } } } ? R : never;

export function shapes(
  request: Ok<'/auth-api/passkeys/login/options', 'post', 200>,
  creation: Ok<'/auth-api/passkeys/register/options', 'post', 200>,
  created: Ok<'/auth-api/passkeys/register/verify', 'post', 201>,
  session: Ok<'/auth-api/passkeys/login/verify', 'post', 200>,
  list: Ok<'/auth-api/passkeys', 'get', 200>,
): unknown[] {
  const challenge: string = request.challenge;
  const rpId: string = request.rpId;
  const userHandle: string = creation.user.id;
  const enrol: Body<'/auth-api/passkeys/register/verify', 'post'> = { response: { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'x' }, clientExtensionResults: {} }, name: 'Laptop' };
  const signIn: Body<'/auth-api/passkeys/login/verify', 'post'> = { response: enrol.response };
  const backedUp: boolean = created.passkey.backedUp;
  const token: string = session.accessToken;
  const names: string[] = list.passkeys.map((p) => p.name);
  return [challenge, rpId, userHandle, signIn, backedUp, token, names];
}
`;
      expect(typeErrors({ 'api.ts': types, 'passkeys.ts': passkeys })).toEqual([]);
      expect(typeErrors({ 'api.ts': types, 'passkeys.ts': passkeys.replace('const token: string', 'const token: number') }).join('\n')).toMatch(/not assignable to type 'number'/);
    });

    it('runs against the service and gets the user it registered', async () => {
      typeErrors({ 'api.ts': types, 'client.ts': program });
      await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', resolve));
      const { port } = t.app.getHttpServer().address() as { port: number };
      const email = `${unique('typed')}@example.com`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', join(process.cwd(), 'test/fixtures/run-ts.mjs'), join(dir, 'client.ts'), `http://127.0.0.1:${port}`, email]);
      expect(JSON.parse(stdout)).toMatchObject({ email, same: true });
    });
  });
});

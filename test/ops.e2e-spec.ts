import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Post } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { Response } from 'supertest';
import { Authenticated, Public, USER_ONLY } from '../src/kernel/policy.js';
import { PolicyAudit } from '../src/kernel/policy-audit.js';
import { projectPath } from '../src/platform/config/project-path.js';
import { connectSocket, openSse } from './event-clients.js';
import { describeIf, PASSWORD, startApp, unique, uniqueEmail, waitFor, type TestApp } from './helpers.js';

const APP_VERSION = (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }).version;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('operations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  describe('health', () => {
    it('GET /health/live → 200', async () => {
      const res = await t.http.get('/health/live').expect(200);
      expect(res.body.status).toBe('ok');
    });

    it('GET /health/ready → 200 with the database up', async () => {
      const res = await t.http.get('/health/ready').expect(200);
      expect(res.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });
    });

    it('health answers whatever store a request names (it belongs to no tenant)', async () => {
      await t.http.get('/health/ready').set('svc-store-codename', unique('nostore')).expect(200);
    });
  });

  describe('API documentation', () => {
    it('GET /docs → 200 HTML', async () => {
      const res = await t.http.get('/docs').expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/swagger/i);
    });

    it('GET /docs-json lists the public store and registration routes', async () => {
      const res = await t.http.get('/docs-json').expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body.paths)).toEqual(
        expect.arrayContaining(['/auth-api/v1/briefstores', '/auth-api/v1/registerstoreowner', '/auth-api/v1/registerstoreuser']),
      );
      expect(res.body.paths['/auth-api/v1/briefstores']).toHaveProperty('get');
      expect(res.body.paths['/auth-api/v1/registerstoreowner']).toHaveProperty('post');
      expect(res.body.paths['/auth-api/v1/registerstoreuser']).toHaveProperty('post');
    });
  });

  describe('request ids', () => {
    const requests: Array<[string, () => Promise<Response>]> = [
      ['health', () => t.http.get('/health/live')],
      ['docs', () => t.http.get('/docs-json')],
      ['an envelope', () => t.http.get('/auth-api/v1/briefstores')],
      ['a 404', () => t.http.get('/auth-api/v1/nothing-here')],
      ['a malformed body', () => t.http.post('/auth-api/v1/registerstoreowner').set('Content-Type', 'application/json').send('{')],
      ['a validation error', () => t.http.post('/auth-api/v1/registerstoreowner').send({})],
      ['an unknown store', () => t.http.get('/auth-api/v1/briefstores').set('svc-store-codename', unique('nostore'))],
    ];

    it.each(requests)('%s carries an x-request-id header', async (_, send) => {
      const res = await send();
      expect(res.headers['x-request-id']).toMatch(UUID);
      if (res.body && typeof res.body === 'object' && 'requestId' in res.body) expect(res.body.requestId).toBe(res.headers['x-request-id']);
    });

    it('every response gets its own id', async () => {
      const a = await t.http.get('/health/live');
      const b = await t.http.get('/health/live');
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });

    it('a well-formed incoming id is echoed in the header and the envelope', async () => {
      const id = `req-${unique()}:1.2_3`;
      const res = await t.http.get('/auth-api/v1/briefstores').set('x-request-id', id).expect(200);
      expect(res.headers['x-request-id']).toBe(id);
      expect(res.body.requestId).toBe(id);
    });

    it('a well-formed incoming id is echoed in error bodies (filter and body parser alike)', async () => {
      const id = unique('trace-');
      const notFound = await t.http.get('/auth-api/v1/nothing-here').set('x-request-id', id).expect(404);
      expect(notFound.headers['x-request-id']).toBe(id);
      expect(notFound.body).toMatchObject({ errCode: 'RouteNotFound', requestId: id });
      const malformed = await t.http.post('/auth-api/v1/registerstoreowner').set('x-request-id', id).set('Content-Type', 'application/json').send('{"a":');
      expect(malformed.status).toBe(400);
      expect(malformed.headers['x-request-id']).toBe(id);
      expect(malformed.body).toMatchObject({ errCode: 'MalformedJson', requestId: id });
    });

    it.each([
      ['with spaces', 'bad id with spaces'],
      ['too long', 'a'.repeat(129)],
      ['with a newline-like escape', 'abc%0d%0aSet-Cookie:x=1'],
      ['with a slash', 'a/b'],
    ])('a malformed incoming id (%s) is replaced by a fresh one', async (_, bad) => {
      const res = await t.http.get('/auth-api/v1/briefstores').set('x-request-id', bad).expect(200);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body.requestId).toBe(res.headers['x-request-id']);
      const err = await t.http.get('/auth-api/v1/nothing-here').set('x-request-id', bad).expect(404);
      expect(err.headers['x-request-id']).toMatch(UUID);
      expect(err.body.requestId).toBe(err.headers['x-request-id']);
      expect(res.headers['x-request-id']).not.toBe(err.headers['x-request-id']);
    });
  });
});

// A random client address per run: Redis keeps counters between runs.
function randomIp(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

describe('registration rate limit per client IP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      env: { TRUST_PROXY: 'loopback' },
      settings: { rateLimits: { registration: { points: 3, durationSeconds: 3600 }, registrationFailures: { points: 4, durationSeconds: 60 } } },
    });
  });
  afterAll(() => t.close());

  const owner = (ip: string) =>
    t.http
      .post('/auth-api/v1/registerstoreowner')
      .set('X-Forwarded-For', ip)
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Rate Limited', store: { name: unique('Store ') } });

  it('accepts 3 registrations from one client, refuses the 4th with 429 and Retry-After, lets another client through', async () => {
    const ip = randomIp();
    for (let i = 0; i < 3; i++) {
      const res = await owner(ip);
      expect(res.status).toBe(201);
    }
    const refused = await owner(ip);
    expect(refused.status).toBe(429);
    expect(Object.keys(refused.body).sort()).toEqual(['detail', 'errCode', 'message', 'requestId', 'result', 'status']);
    expect(refused.body).toMatchObject({ result: 'ERR', status: 429, errCode: 'TooManyRequests' });
    // Names the setting to change.
    expect(refused.body.detail).toContain('rateLimits.registration');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    const seconds = Number(refused.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(3600);

    let other = randomIp();
    while (other === ip) other = randomIp();
    expect((await owner(other)).status).toBe(201);
  });

  it('lets exactly 3 of 12 concurrent registrations from one client through, refusing the rest with 429', async () => {
    const ip = randomIp();
    const answers = await Promise.all(Array.from({ length: 12 }, () => owner(ip)));
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(3).fill(201), ...Array(9).fill(429)]);
    for (const refused of answers.filter((res) => res.status === 429)) {
      expect(refused.body).toMatchObject({ result: 'ERR', status: 429, errCode: 'TooManyRequests' });
    }
    expect((await owner(ip)).status).toBe(429);
  });

  it('does not count refused registrations against the registration limit', async () => {
    const ip = randomIp();
    for (let i = 0; i < 3; i++) expect((await owner(ip).send({ email: 'not an email' })).status).toBe(400);
    for (let i = 0; i < 3; i++) expect((await owner(ip)).status).toBe(201);
  });

  it('refuses a client after too many failures, naming their own setting', async () => {
    const ip = randomIp();
    for (let i = 0; i < 4; i++) expect((await owner(ip).send({ password: 'short' })).status).toBe(400);
    const refused = await owner(ip);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain('rateLimits.registrationFailures');
  });

  it('counts store-user registrations in the same budget', async () => {
    const ip = randomIp();
    const codename = (await owner(ip).expect(201)).body.store.codename as string;
    const user = () =>
      t.http
        .post('/auth-api/v1/registerstoreuser')
        .set('X-Forwarded-For', ip)
        .set('svc-store-codename', codename)
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Store User' });
    expect((await user()).status).toBe(201);
    expect((await user()).status).toBe(201);
    const refused = await user();
    expect(refused.status).toBe(429);
    expect(refused.body.errCode).toBe('TooManyRequests');
  });
});

describe('registration rate limit without a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Own key prefix (service codename), so this run's 127.0.0.1 counter is shared with nothing.
    t = await startApp({ env: { SERVICE_CODENAME: unique('rl') }, settings: { rateLimits: { registration: { points: 2, durationSeconds: 60 } } } });
  });
  afterAll(() => t.close());

  it('ignores X-Forwarded-For: a client cannot pick a fresh counter', async () => {
    const send = () =>
      t.http
        .post('/auth-api/v1/registerstoreowner')
        .set('X-Forwarded-For', randomIp())
        .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Spoofer', store: { name: unique('Store ') } });
    expect((await send()).status).toBe(201);
    expect((await send()).status).toBe(201);
    expect((await send()).status).toBe(429);
  });
});

// The real entry point in its own process; resolves once it prints its plain start-up line.
async function startMain(settings: Record<string, string>): Promise<{ child: ChildProcessWithoutNullStreams; line: string; output: () => string }> {
  const env = { PATH: process.env.PATH, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATA_DIR: ':memory:', ...settings };
  const forwarded = Object.fromEntries(['DATABASE_URL', 'REDIS_URL'].filter((k) => process.env[k]).map((k) => [k, process.env[k]]));
  const child = spawn(process.execPath, ['--import', './test/fixtures/run-ts.mjs', 'src/main.ts'], { env: { ...env, ...forwarded }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const found = /^.* listening on .*$/m.exec(stdout);
        if (found) resolve(found[0]);
      });
      child.on('exit', () => reject(new Error(`the service stopped before listening:\n${stdout}${stderr}`)));
    });
    return { child, line, output: () => stdout };
  } catch (error) {
    await stopMain(child);
    throw error;
  }
}

async function stopMain(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = child.exitCode === null ? once(child, 'exit') : undefined;
  child.kill('SIGTERM');
  await exited;
}

// The service's own address, as its start-up line gives it.
const addressIn = (line: string) => /listening on (http:\/\/[^ ]+)/.exec(line)![1];

describe('the start-up line of the service', () => {
  beforeAll(() => {
    // .ci/run builds before the tests; a developer's run builds the console here when missing (~1 s).
    if (!existsSync(projectPath('dist', 'console', 'index.html'))) execFileSync(process.execPath, [projectPath('scripts', 'console-build.mjs')], { stdio: 'inherit' });
  });

  it('is the last of a few lines at the default log level, without Nest\'s module and route mapping, and names the console and the docs', async () => {
    // As `npm start` runs it: the default NODE_ENV and LOG_LEVEL, standard output a pipe.
    const { child, line, output } = await startMain({ NODE_ENV: 'development' });
    try {
      const url = addressIn(line);
      expect(line).toBe(`svc-auth ${APP_VERSION} listening on ${url} (admin console: ${url}/console, API docs: ${url}/docs)`);
      // What comes later comes from requests (none here), not from the start.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const lines = output().split('\n').filter(Boolean);
      expect(lines.filter((l) => /Mapped \{|RoutesResolver|InstanceLoader|RouterExplorer/.test(l))).toEqual([]);
      expect(lines.length).toBeLessThan(15);
      expect(lines.at(-1)).toBe(line);
      expect((await fetch(`${url}/console`)).status).toBe(200);
      expect((await fetch(`${url}/docs`)).status).toBe(200);
    } finally {
      await stopMain(child);
    }
  }, 90_000);

  it('does not name /docs when the docs are not served', async () => {
    const { child, line } = await startMain({ LOG_LEVEL: 'silent', DOCS_ENABLED: 'false' });
    try {
      const url = addressIn(line);
      expect(line).toMatch(/ listening on http:\/\/127\.0\.0\.1:\d+ \(admin console: http:\/\/127\.0\.0\.1:\d+\/console\)$/);
      expect(line).not.toMatch(/docs/i);
      expect((await fetch(`${url}/docs`)).status).toBe(404);
    } finally {
      await stopMain(child);
    }
  }, 90_000);

  it('does not name /console when the console is off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-settings-'));
    const settings = join(dir, 'settings.json');
    writeFileSync(settings, JSON.stringify({ console: { enabled: false, path: '/console' } }));
    const { child, line } = await startMain({ LOG_LEVEL: 'silent', SERVICE_SETTINGS: settings });
    try {
      const url = addressIn(line);
      expect(line).toMatch(/ listening on http:\/\/127\.0\.0\.1:\d+ \(API docs: http:\/\/127\.0\.0\.1:\d+\/docs\)$/);
      expect(line).not.toMatch(/console/i);
      expect((await fetch(`${url}/console`)).status).toBe(404);
    } finally {
      await stopMain(child);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('a shutdown (SIGTERM)', () => {
  it('ends event streams and sockets first, closes kept-alive connections, answers with `Connection: close` meanwhile, and exits', async () => {
    const { child, line } = await startMain({ LOG_LEVEL: 'silent' });
    // Two keep-alive clients, each holding a connection.
    const agents = [new Agent({ keepAlive: true }), new Agent({ keepAlive: true })];
    const open: { close(): void }[] = [];
    try {
      const base = addressIn(line);
      const { hostname, port } = new URL(base);
      const s = await openSse(base, '/events/live-sse/stream?topics=storeCreated');
      open.push(s);
      await s.next('subscribed');
      const c = await connectSocket(base, 'live');
      open.push(c);
      c.socket.emit('subscribe', { topics: ['storeCreated'] });
      await c.next('subscribed');

      // A kept-alive connection that is idle when the signal comes.
      const idle = await new Promise<Socket>((resolve, reject) => {
        const req = httpRequest({ host: hostname, port, path: '/health/live', agent: agents[0] }, (res) => res.resume().on('end', () => resolve(req.socket!)));
        req.on('error', reject).end();
      });
      const idleClosed = once(idle, 'close');

      // A kept-alive connection with a request under way when the signal comes: its body is
      // only half sent (a route that answers at once once it has the body: 401, no login).
      const body = JSON.stringify({ name: 'a key that will not be made' });
      const busy = httpRequest({ host: hostname, port, path: '/auth-api/v1/apikeys', method: 'POST', agent: agents[1], headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
      const answer = new Promise<IncomingMessage>((resolve, reject) => busy.on('response', resolve).on('error', reject));
      answer.catch(() => undefined); // awaited below, unless an earlier step fails
      busy.write(body.slice(0, 10));
      const busySocket: Socket = await new Promise((resolve) => busy.on('socket', (socket) => (socket.connecting ? socket.once('connect', () => resolve(socket)) : resolve(socket))));
      await new Promise((resolve) => setTimeout(resolve, 200));

      const signalled = Date.now();
      const exited = once(child, 'exit');
      child.kill('SIGTERM');

      // While that request is still under way: the stream and the socket have ended, the idle
      // connection is closed.
      const shutdown = { message: 'errMsg_ServiceUnavailable', errCode: 'ServiceUnavailable', detail: 'the service is shutting down' };
      await waitFor('the stream to end', () => (s.ended ? true : undefined), 2000);
      expect(s.received.at(-1)).toEqual({ event: 'error', data: shutdown });
      expect(await c.next('error', 2000)).toEqual(shutdown);
      await c.next('disconnect', 2000);
      await Promise.race([idleClosed, new Promise((_, reject) => setTimeout(() => reject(new Error('the idle connection stayed open')), 2000))]);
      expect(child.exitCode).toBeNull();

      // The request under way is answered, telling the client not to reuse the connection, which
      // is closed.
      const busyClosed = once(busySocket, 'close');
      busy.end(body.slice(10));
      const res = await answer;
      res.resume();
      expect(res.statusCode).toBe(401);
      expect(res.headers.connection).toBe('close');
      await busyClosed;

      const [code] = await exited;
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(5000);
    } finally {
      for (const c of open) c.close();
      for (const agent of agents) agent.destroy();
      await stopMain(child);
    }
  }, 90_000);
});

describe('the log on standard output', () => {
  it('holds whole JSON lines: the start, each request (written however many come at once) and the shutdown, written before the process exits', async () => {
    const { child, line, output } = await startMain({ LOG_LEVEL: 'info', DOCS_ENABLED: 'false' });
    let stopped = false;
    try {
      const url = addressIn(line);
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => fetch(`${url}/auth-api/v1/briefstores?pageRowCount=${(i % 5) + 1}`)));
      expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
      await stopMain(child);
      stopped = true;
      const lines = output().split('\n').filter((l) => l && l !== line);
      const entries = lines.map((l) => JSON.parse(l) as { msg: string; context?: string; req?: { url: string } });
      expect(entries.filter((e) => e.msg === 'request completed' && e.req?.url.startsWith('/auth-api/v1/briefstores'))).toHaveLength(50);
      expect(entries.find((e) => e.msg === 'service listening')).toMatchObject({ context: 'Main', database: process.env.DATABASE_URL ? 'postgres' : 'embedded' });
      expect(entries.at(-1)).toMatchObject({ msg: 'shutting down', context: 'Main', signal: 'SIGTERM' });
    } finally {
      if (!stopped) await stopMain(child);
    }
  }, 90_000);
});

// A developer's terminal: `script` gives the service a pseudo-terminal as its standard output.
const hasScript = spawnSync('script', ['--version']).status === 0;
const describeWithPty = describeIf(hasScript, 'needs `script` from util-linux');

async function outputInTerminal(nodeEnv: string, settings: Record<string, string> = {}): Promise<string> {
  const env = { ...settings, PATH: process.env.PATH, NODE_ENV: nodeEnv, HOST: '127.0.0.1', PORT: '0', DATA_DIR: ':memory:', LOG_LEVEL: 'info', DOCS_ENABLED: 'false' };
  const forwarded = Object.fromEntries(['DATABASE_URL', 'REDIS_URL'].filter((k) => process.env[k]).map((k) => [k, process.env[k]]));
  const command = `${process.execPath} --import ./test/fixtures/run-ts.mjs src/main.ts`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...env, ...forwarded }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitFor('the start-up line', () => {
      if (child.exitCode !== null) throw new Error(`the service stopped before listening:\n${output}`);
      return / listening on /.test(output) || undefined;
    }, 60_000);
    await waitFor('the start log line', () => /service listening/.test(output) || undefined);
  } finally {
    const exited = child.exitCode === null ? once(child, 'exit') : undefined;
    child.kill('SIGTERM');
    await exited;
  }
  return output;
}

describeWithPty('the log in a terminal', () => {
  it('is human-readable in development: one line an entry, no JSON', async () => {
    const lines = (await outputInTerminal('development')).split(/\r?\n/).filter(Boolean);
    expect(lines.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    // time, level, where it comes from, the message
    expect(lines.find((l) => l.includes('service listening'))).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] \S*INFO\S*: \S*Main: service listening/);
  }, 90_000);

  it('stays JSON in production', async () => {
    const lines = (await outputInTerminal('production', { SUPER_ADMIN_PASSWORD: 'a-long-enough-password-123', PUBLIC_URL: 'http://127.0.0.1:3000' })).split(/\r?\n/).filter(Boolean);
    const json = lines.filter((l) => l.startsWith('{'));
    expect(json.find((l) => JSON.parse(l).msg === 'service listening')).toBeDefined();
    expect(lines.filter((l) => !l.startsWith('{') && !/ listening on /.test(l))).toEqual([]);
  }, 90_000);
});

describe('PolicyAudit', () => {
  // Decorators applied as calls: Jest's inline-snapshot writer cannot parse decorator syntax.
  function controller(methods: Record<string, MethodDecorator[]>): new () => object {
    const fake = class {};
    for (const [name, decorators] of Object.entries(methods)) {
      Object.defineProperty(fake.prototype, name, { value: function () {}, writable: true, configurable: true });
      Reflect.decorate(decorators, fake.prototype, name, Object.getOwnPropertyDescriptor(fake.prototype, name));
    }
    Reflect.decorate([Controller('fake')], fake);
    return fake;
  }
  const Unmarked = controller({ open: [Get('open'), Public()], forgotten: [Post('forgotten')] });
  const AllMarked = controller({
    open: [Get('open'), Public()],
    guarded: [Post('guarded'), Authenticated({ principals: USER_ONLY, roles: ['tenantAdmin'], permission: null })],
  });

  const audit = (metatype: new () => object) => {
    const discovery = { getControllers: () => [{ instance: new metatype(), metatype }] } as unknown as DiscoveryService;
    return new PolicyAudit(discovery, new MetadataScanner(), new Reflector());
  };

  it('stops the boot when a route declares no policy, naming it', () => {
    let message = '';
    try {
      audit(Unmarked).onModuleInit();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/without a policy/);
    expect(message).toContain('POST /fake/forgotten');
    expect(message).not.toContain('/fake/open');
  });

  it('lets the boot go on when every route declares one, and describes each', () => {
    expect(() => audit(AllMarked).onModuleInit()).not.toThrow();
    expect(audit(AllMarked).routes()).toEqual([
      { method: 'POST', path: '/fake/guarded', policy: 'authenticated(user) roles=tenantAdmin permission=none' },
      { method: 'GET', path: '/fake/open', policy: 'public' },
    ]);
  });
});

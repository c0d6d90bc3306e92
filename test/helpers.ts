import { randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { expect } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type TestAgent from 'supertest/lib/agent.js';
import { createApp, type RunningApp } from '../src/app.js';
import type { Extension } from '../src/extension.js';
import type { Clock } from '../src/platform/clock/clock.js';
import type { SettingsOverrides } from '../src/settings.js';
import { DatabaseNotifications } from '../src/platform/database/database-notifications.js';
import { describeIf } from './conditions.js';

export const PASSWORD = 'correct horse battery';

export interface TestApp extends RunningApp {
  http: TestAgent;
}

// Every rate limit lifted: a test lowers only the one it is about (`settings.rateLimits` is merged
// over these). The counters live in the Redis the suites share, keyed by address, so a limit left
// at its default would count other suites' requests from 127.0.0.1.
const OPEN_LIMITS = {
  registration: { points: 1_000_000, durationSeconds: 1 },
  registrationFailures: { points: 1_000_000, durationSeconds: 1 },
  loginPerIp: { points: 1_000_000, durationSeconds: 1 },
  loginPerUsername: { points: 1_000_000, durationSeconds: 1 },
  passwordlessPerAddress: { points: 1_000_000, durationSeconds: 1 },
  passwordlessPerIp: { points: 1_000_000, durationSeconds: 1 },
};

// The real application on the run's database (shared embedded PGlite, or DATABASE_URL) and
// Redis when REDIS_URL is set, with every rate limit lifted unless a test sets its own.
export async function startApp(
  opts: { env?: Record<string, string | undefined>; settings?: SettingsOverrides & Record<string, unknown>; clock?: Clock; logStream?: { write(line: string): void }; imports?: unknown[]; extensions?: readonly Extension[] } = {},
): Promise<TestApp> {
  const running = await createApp({
    extensions: opts.extensions,
    clock: opts.clock,
    logStream: opts.logStream,
    imports: opts.imports,
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: ':memory:', // avatar storage in memory: tests write nothing into the repo
      BCRYPT_COST: '4',
      DATABASE_URL: process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL,
      REDIS_URL: process.env.REDIS_URL,
      ...opts.env,
    },
    settings: { ...opts.settings, rateLimits: { ...OPEN_LIMITS, ...opts.settings?.rateLimits } },
  });
  return { ...running, http: request(running.app.getHttpServer()) };
}

// A loopback port free right now (for a server a test starts on a known port).
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export function unique(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

export function uniqueEmail(): string {
  return `${unique('u')}@example.com`;
}

// A valid US mobile number, different in most calls.
export function randomMobile(): string {
  return `+1415555${randomInt(1000, 10000)}`;
}

export interface RegisteredStore {
  codename: string;
  storeId: string;
  ownerId: string;
  ownerEmail: string;
}

// A fresh store (and owner) per test keeps tests independent without truncating tables.
export async function registerStore(http: TestAgent, overrides: Record<string, unknown> = {}): Promise<RegisteredStore> {
  const ownerEmail = uniqueEmail();
  const res = await http
    .post('/auth-api/v1/registerstoreowner')
    .send({ email: ownerEmail, password: PASSWORD, fullname: 'Store Owner', store: { name: unique('Store ') }, ...overrides })
    .expect(201);
  return { codename: res.body.store.codename, storeId: res.body.store.id, ownerId: res.body.user.id, ownerEmail };
}

export const SUPER_ADMIN = { username: 'admin@example.com', password: 'superadmin-change-me' };

export interface Login {
  accessToken: string;
  userBucketToken: string;
  sessionId: string;
  userId: string;
  body: Record<string, unknown>;
}

// Logs in to `codename` (root when absent) and returns the session.
export async function login(http: TestAgent, username: string, password = PASSWORD, codename?: string): Promise<Login> {
  const req = http.post('/auth-api/login').send({ username, password });
  if (codename) req.set('svc-store-codename', codename);
  const res = await req.expect(200);
  return { accessToken: res.body.accessToken, userBucketToken: res.body.userBucketToken, sessionId: res.body.sessionId, userId: res.body.userId, body: res.body };
}

// The error shape with this status and errCode; `message` is always a catalogue message code.
export function expectError(res: { status: number; body: unknown }, status: number, errCode: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { result: 'ERR', status, errCode, message: expect.stringMatching(/^errMsg_/) } });
}

// Polls `probe` until it gives a value, or fails naming `what` after the deadline.
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A refused boot closes every connection it opened (a leaked one keeps the process alive): the
// count of open sockets comes back to what it was before the boot. A close completes a moment
// after the refusal, later on a loaded machine; a leaked socket never does.
export async function expectSocketsReleased(before: number): Promise<void> {
  await waitFor(`no more than ${before} open sockets`, () => (openSockets() <= before ? true : undefined), 15_000).catch(() => undefined);
  expect(openSockets()).toBeLessThanOrEqual(before);
}

export function openSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
}

// Changes a store's row in the database, as an operator would, and returns once every app given
// has heard the database announce it (its store cache then forgets the row). On PostgreSQL the
// announcement reaches the listening connection just after the commit, so a request sent in
// that instant could still be answered from the cache.
export async function updateStoreRow(apps: RunningApp[], storeId: string, set: Record<string, unknown>): Promise<void> {
  const columns = Object.keys(set);
  const heard = apps.map((app) => {
    let unsubscribe = () => {};
    const done = new Promise<void>((resolve) => {
      unsubscribe = app.app.get(DatabaseNotifications).subscribe('store_changed', { message: (id) => id === storeId && resolve(), reset: resolve });
    });
    return done.finally(() => unsubscribe());
  });
  await apps[0].app.get(DataSource).query(`UPDATE "stores" SET ${columns.map((c, i) => `"${c}" = $${i + 2}`).join(', ')} WHERE "id" = $1`, [storeId, ...Object.values(set)]);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the store change was not announced within 5 s')), 5_000)));
  await Promise.race([Promise.all(heard), late]).finally(() => clearTimeout(timer));
}

// Debian's Chromium (or another installed one) for the browser suites, which skip without it.
// No browser is ever downloaded.
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
export const describeWithChromium = describeIf(CHROMIUM, 'needs Chromium, none is installed');

export { describeIf, describeWithRedis, itIf } from './conditions.js';

// pino's levels: 40 is warn, 50 error.
export type LogLine = { level: number; msg?: string } & Record<string, unknown>;

// One log for every app of a test file: nestjs-pino keeps the stream of the first app a process
// starts, so each app gets `logged` and a test reads what its own requests added since `mark()`.
export function collectLog() {
  const lines: string[] = [];
  return {
    logged: { logStream: { write: (line: string) => void lines.push(line) } },
    mark: () => lines.length,
    rawSince: (from: number): string[] => lines.slice(from),
    since: (from: number): LogLine[] => lines.slice(from).map((line) => JSON.parse(line) as LogLine),
  };
}

export function setCookies(res: { headers: Record<string, unknown> }): string[] {
  const raw = res.headers['set-cookie'];
  return Array.isArray(raw) ? (raw as string[]) : raw ? [raw as string] : [];
}

// The one Set-Cookie for `name`, split into its value and lower-cased attributes.
export function cookieNamed(res: { headers: Record<string, unknown> }, name: string): { value: string; attrs: Map<string, string> } {
  const matching = setCookies(res).filter((c) => c.startsWith(`${name}=`));
  expect(matching).toHaveLength(1);
  const [pair, ...rest] = matching[0].split(';').map((s) => s.trim());
  const attrs = new Map(
    rest.map((a) => {
      const i = a.indexOf('=');
      return i < 0 ? [a.toLowerCase(), ''] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)];
    }),
  );
  return { value: pair.slice(name.length + 1), attrs };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PASSWORD, unique, uniqueEmail } from './helpers.js';

const HEADER = 'svc-store-codename';

// The real entry point in its own process, killed with SIGKILL (no shutdown of any kind) while
// registrations are being written, then started again on the same data: the embedded database's
// directory, or the PostgreSQL database of DATABASE_URL.
describe('a service killed (SIGKILL) while it writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kill-'));
  const settings = join(dir, 'settings.json');
  writeFileSync(
    settings,
    JSON.stringify({ rateLimits: { registration: { points: 1_000_000, durationSeconds: 1 }, registrationFailures: { points: 1_000_000, durationSeconds: 1 }, loginPerIp: { points: 1_000_000, durationSeconds: 1 } } }),
  );
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function start(): Promise<{ child: ChildProcess; url: string }> {
    const env = {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.CHILD_LOG_LEVEL ?? 'warn',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: join(dir, 'data'),
      BCRYPT_COST: '4',
      SERVICE_SETTINGS: settings,
      SERVICE_CODENAME: unique('kill'), // its own Redis keys
      ...Object.fromEntries(['DATABASE_URL', 'REDIS_URL'].filter((k) => process.env[k]).map((k) => [k, process.env[k]])),
    };
    const child = spawn(process.execPath, ['--import', './test/fixtures/run-ts.mjs', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    return new Promise((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (process.env.CHILD_LOG_LEVEL) process.stderr.write(chunk);
        const found = / listening on (http:\/\/\S+)/.exec(output);
        if (found) resolve({ child, url: found[1] });
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.on('exit', () => reject(new Error(`the service stopped before listening:\n${output.slice(-3000)}`)));
    });
  }

  it('loses no registration it acknowledged: after a restart each acknowledged owner logs in to its store', async () => {
    const first = await start();
    const acknowledged: { email: string; codename: string }[] = [];
    let killed = false;
    // Eight clients register stores one after another until the service dies under them.
    const client = async () => {
      while (!killed) {
        const email = uniqueEmail();
        try {
          const res = await fetch(`${first.url}/auth-api/v1/registerstoreowner`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password: PASSWORD, fullname: 'Durable Owner', store: { name: unique('Durable ') } }),
          });
          if (res.status === 201) acknowledged.push({ email, codename: ((await res.json()) as { store: { codename: string } }).store.codename });
        } catch {
          // the connection died with the service: not acknowledged
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    while (acknowledged.length < 40) await new Promise((r) => setTimeout(r, 20));
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL'); // with writes in flight
    killed = true;
    expect(await exited).toEqual([null, 'SIGKILL']);
    await Promise.all(clients);

    const second = await start();
    try {
      for (const { email, codename } of acknowledged) {
        const res = await fetch(`${second.url}/auth-api/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [HEADER]: codename },
          body: JSON.stringify({ username: email, password: PASSWORD }),
        });
        expect({ email, status: res.status }).toEqual({ email, status: 200 });
      }
    } finally {
      const stopped = once(second.child, 'exit');
      second.child.kill('SIGTERM');
      await stopped;
    }
  }, 120_000);

  it('a SIGTERM during a burst of failed logins: every refused login answered before the stop is in the audit log after a restart', async () => {
    const first = await start();
    const post = (url: string, path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const owner = uniqueEmail();
    const registered = await post(first.url, '/auth-api/v1/registerstoreowner', { email: owner, password: PASSWORD, fullname: 'Audited Owner', store: { name: unique('Audited ') } });
    expect(registered.status).toBe(201);
    const codename = ((await registered.json()) as { store: { codename: string } }).store.codename;

    // Failed logins (unknown usernames: no lockout) from 8 clients; the stop comes while they run.
    let refused = 0;
    let stopping = false;
    const client = async () => {
      while (!stopping || refused === 0) {
        try {
          const res = await post(first.url, '/auth-api/login', { username: `${unique('nobody')}@example.com`, password: 'not the password' }, { [HEADER]: codename });
          if (res.status === 401) refused++;
        } catch {
          return; // the service has stopped listening
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    while (refused < 60) await new Promise((r) => setTimeout(r, 5));
    const exited = once(first.child, 'exit');
    stopping = true;
    first.child.kill('SIGTERM');
    await Promise.all(clients);
    expect(await exited).toEqual([0, null]);

    const second = await start();
    try {
      const login = await post(second.url, '/auth-api/login', { username: owner, password: PASSWORD }, { [HEADER]: codename });
      const { accessToken } = (await login.json()) as { accessToken: string };
      const page = await fetch(`${second.url}/auth-api/v1/auditlogs?action=user.login.failed&pageRowCount=1`, { headers: { [HEADER]: codename, authorization: `Bearer ${accessToken}` } });
      const body = (await page.json()) as { paging: { totalRowCount: number } };
      expect(body.paging.totalRowCount).toBeGreaterThanOrEqual(refused);
    } finally {
      const stopped = once(second.child, 'exit');
      second.child.kill('SIGTERM');
      await stopped;
    }
  }, 120_000);
});

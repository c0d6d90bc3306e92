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
  writeFileSync(settings, JSON.stringify({ rateLimits: { registration: { points: 1_000_000, durationSeconds: 1 }, registrationFailures: { points: 1_000_000, durationSeconds: 1 } } }));
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function start(): Promise<{ child: ChildProcess; url: string }> {
    const env = {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
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
});

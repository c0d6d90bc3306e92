// Login with the audit log on against off, in one run: two service processes of this build
// (bench/sut-server.ts, one with AUDIT_LOG=off) on the same database mode, login rounds
// interleaved at 8 connections over 4 users each. Prints each round and on/off of the medians.
//
//   npm run bench:audit                  embedded database
//   DATABASE_URL=postgres://…/<bench database> REDIS_URL=redis://… npm run bench:audit
// D (seconds per round, 6) and R (rounds, 5) pass through.
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, startService } from './process-stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const PASSWORD = 'bench password 1234';
const SECONDS = Number(process.env.D ?? 6);
const ROUNDS = Number(process.env.R ?? 5);
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));

async function start(audit: 'on' | 'off'): Promise<number> {
  return (await startService(path.dirname(HERE), { AUDIT_LOG: audit }, children)).port;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

interface Target {
  base: string;
  users: { email: string; codename: string }[];
  rps: number[];
  failed: number;
}

async function target(audit: 'on' | 'off'): Promise<Target> {
  const base = `http://127.0.0.1:${await start(audit)}/auth-api`;
  const users = [];
  for (let i = 0; i < 4; i++) {
    const email = `audit-${audit}-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await post(`${base}/v1/registerstoreowner`, { email, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } });
    users.push({ email, codename: registered.store.codename as string });
  }
  return { base, users, rps: [], failed: 0 };
}

async function round(t: Target, seconds: number): Promise<void> {
  let i = 0;
  const r = await autocannon({
    url: `${t.base}/login`,
    connections: 8,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req: any) => {
          const u = t.users[i++ % t.users.length];
          return { ...req, headers: { 'content-type': 'application/json', 'svc-store-codename': u.codename }, body: JSON.stringify({ username: u.email, password: PASSWORD }) };
        },
      },
    ],
  } as any);
  t.rps.push(r.requests.average);
  t.failed += r.non2xx + r.errors + r.timeouts;
}

async function main(): Promise<void> {
  const on = await target('on');
  const off = await target('off');
  await round(on, 2);
  await round(off, 2);
  on.rps = [];
  off.rps = [];
  for (let i = 0; i < ROUNDS; i++) {
    await round(on, SECONDS);
    await round(off, SECONDS);
    process.stdout.write(`round ${i + 1}: on ${on.rps[i].toFixed(1)}, off ${off.rps[i].toFixed(1)} logins/s\n`);
  }
  const mode = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded database';
  process.stdout.write(
    `login, audit log on vs off (${mode}${process.env.REDIS_URL ? ' + Redis' : ''}, 8 connections, ${ROUNDS} x ${SECONDS} s interleaved): ` +
      `on ${median(on.rps).toFixed(1)}/s, off ${median(off.rps).toFixed(1)}/s, on/off ${(median(on.rps) / median(off.rps)).toFixed(3)}; failed ${on.failed + off.failed}\n`,
  );
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

// The OpenID Connect provider under load: authorization-code exchanges/s and client_credentials
// grants/s, against the floor's hash-free login measured in the same run (the shared harness,
// ../shared/bench/run-auth.mjs or BENCH_HARNESS), and client_credentials grants per second of
// the service's CPU, against Keycloak's published sizing (120 client-credentials grants/s per vCPU).
//
//   npm run bench:oidc                    embedded database
//   DATABASE_URL=… REDIS_URL=… npm run bench:oidc
// R (3) rounds of D (5) seconds, C (8) connections. Codes are made just before each round (one
// authorization each, with the signed-in browser's provider session and a first-party client).
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, startService } from './process-stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url)); // dist/bench
const ROOT = path.resolve(HERE, '../..');
const HARNESS = process.env.BENCH_HARNESS ?? path.resolve(ROOT, '../shared/bench/run-auth.mjs');
const PASSWORD = 'bench password 1234';
const ROUNDS = Number(process.env.R ?? 3);
const SECONDS = Number(process.env.D ?? 5);
const CONNECTIONS = Number(process.env.C ?? 8);
const REDIRECT = 'http://127.0.0.1:9/callback';
const KEYCLOAK_CC_PER_VCPU = 120;
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));

function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

function runHarness(args: string[]): Promise<number> {
  const child = spawn(process.execPath, ['--import', path.join(HERE, 'resolve-from-project.js'), HARNESS, ...args], { stdio: 'inherit', env: { NEST_FROM: ROOT, ...process.env } });
  children.push(child);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

async function call(base: string, method: string, route: string, headers: Record<string, string>, body: unknown, expect: number): Promise<any> {
  const res = await fetch(`${base}${route}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

// A browser's cookies for the service, redirects followed by hand.
class Browser {
  private readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return res;
  }
}

// The service's addresses are its PUBLIC_URL's (bench/sut-server.ts names port 3000): read on the
// port it listens on.
let published = '';
const local = (url: string, base: string) => {
  const to = new URL(url, base).href;
  return published && to.startsWith(published) ? base + to.slice(published.length) : to;
};
const location = (res: Response, base: string) => local(res.headers.get('location')!, base);

interface Round {
  rps: number;
  cpuPerReq: number;
  failed: number;
}

async function main(): Promise<void> {
  const mode = process.env.DATABASE_URL ? 'postgres' : 'embedded';
  const out = path.join(ROOT, 'bench', 'results', `oidc-${mode}-${new Date().toISOString().replace(/[:.]/g, '-')}-floor.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const { child, port } = await startService(path.resolve(HERE, '..'), {}, children);
  const pid = child.pid!;
  const base = `http://127.0.0.1:${port}`;

  const email = `oidc-${randomBytes(4).toString('hex')}@example.com`;
  const owner = await call(base, 'POST', '/auth-api/v1/registerstoreowner', {}, { email, password: PASSWORD, fullname: 'Bench Owner', store: { name: `Bench ${randomBytes(3).toString('hex')}` } }, 201);
  const store = { 'svc-store-codename': owner.store.codename as string };
  const login = await call(base, 'POST', '/auth-api/login', store, { username: email, password: PASSWORD }, 200);
  const { oauthClient } = await call(base, 'POST', '/auth-api/v1/oauthclients', { ...store, authorization: `Bearer ${login.accessToken}` }, {
    name: 'Bench app',
    redirectUris: [REDIRECT],
    grantTypes: ['authorization_code', 'client_credentials'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    scopes: ['openid'],
    firstParty: true,
  }, 201);
  const issuer = `${base}/auth-api/oidc/${owner.store.codename}`;
  published = new URL(((await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer).origin;
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(oauthClient.clientId)}:${encodeURIComponent(oauthClient.clientSecret)}`).toString('base64')}`;
  const form = { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' };

  // One sign-in at the pages; then each authorization answers a code at once.
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = `${issuer}/auth?${new URLSearchParams({ client_id: oauthClient.clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' })}`;
  const browser = new Browser();
  let res = await browser.fetch(authorize);
  for (let hops = 0; hops < 10; hops++) {
    if (res.status === 302 || res.status === 303) {
      const to = location(res, base);
      if (to.startsWith(REDIRECT)) break;
      res = await browser.fetch(to);
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    if (!action) throw new Error(`no form at the sign-in page: ${html.slice(0, 300)}`);
    res = await browser.fetch(local(action, base), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: email, password: PASSWORD }) });
  }
  const code = async (): Promise<string> => {
    let r = await browser.fetch(authorize);
    for (let hops = 0; hops < 5; hops++) {
      const to = location(r, base);
      if (to.startsWith(REDIRECT)) return new URL(to).searchParams.get('code')!;
      r = await browser.fetch(to);
    }
    throw new Error('no code');
  };
  const codes = async (n: number): Promise<string[]> => {
    const all: string[] = [];
    while (all.length < n) all.push(...(await Promise.all(Array.from({ length: Math.min(16, n - all.length) }, code))));
    return all;
  };

  const measure = async (requests: unknown[], seconds: number): Promise<Round> => {
    const cpu0 = cpuMicros(pid);
    const r = await autocannon({ url: `${issuer}/token`, connections: CONNECTIONS, duration: seconds, requests } as never);
    const cpu = cpuMicros(pid) - cpu0;
    return { rps: r.requests.average, cpuPerReq: cpu / Math.max(1, r.requests.total), failed: r.non2xx + r.errors + r.timeouts };
  };
  const ccRequests = [{ method: 'POST', headers: form, body: 'grant_type=client_credentials' }];
  // Enough codes for a round at twice the rate seen in a first short round.
  let codeRate = 200;
  const exchangeRound = async (seconds: number): Promise<Round> => {
    const queue = await codes(Math.ceil(codeRate * 2 * seconds) + CONNECTIONS);
    const body = (c: string | undefined) => `grant_type=authorization_code&code=${c}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_verifier=${verifier}`;
    const round = await measure([{ method: 'POST', headers: form, setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body(queue.shift()) }) }], seconds);
    codeRate = Math.max(codeRate, round.rps);
    return round;
  };

  await measure(ccRequests, 2); // warm-up
  await exchangeRound(2);
  const cc: Round[] = [];
  const exchanges: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    cc.push(await measure(ccRequests, SECONDS));
    exchanges.push(await exchangeRound(SECONDS));
  }
  const code_ = await runHarness(['--targets', 'floor', '--scenarios', 'login', '--out', out]);
  if (code_ !== 0 && code_ !== 2) throw new Error(`the harness failed (exit ${code_})`);
  const floorLogin: number | undefined = JSON.parse(fs.readFileSync(out, 'utf8')).summary?.login?.floor?.reqPerSecMedian;

  const ccRps = median(cc.map((r) => r.rps));
  const ccCpu = median(cc.map((r) => r.cpuPerReq));
  const exRps = median(exchanges.map((r) => r.rps));
  const ratio = (x: number) => (floorLogin ? (x / floorLogin).toFixed(2) : '?');
  process.stdout.write(
    `\nOpenID Connect provider (${mode}), ${CONNECTIONS} connections, ${ROUNDS} x ${SECONDS} s\n` +
      `  client_credentials: ${ccRps.toFixed(0)} grants/s, ${ccCpu.toFixed(0)} µs service CPU/grant = ${(1e6 / ccCpu).toFixed(0)} grants per CPU-second ` +
      `(Keycloak's sizing: ${KEYCLOAK_CC_PER_VCPU}/vCPU: x${(1e6 / ccCpu / KEYCLOAK_CC_PER_VCPU).toFixed(1)}), ${cc.reduce((n, r) => n + r.failed, 0)} failed\n` +
      `  code exchanges: ${exRps.toFixed(0)} /s, ${median(exchanges.map((r) => r.cpuPerReq)).toFixed(0)} µs service CPU/exchange, ${exchanges.reduce((n, r) => n + r.failed, 0)} failed\n` +
      `  floor login (hash-free, same run): ${floorLogin?.toFixed(0) ?? '?'} req/s; client_credentials/floor-login ${ratio(ccRps)}, exchange/floor-login ${ratio(exRps)}\n`,
  );
}

main()
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? `${error.stack} ${String((error as { cause?: unknown }).cause ?? "")}` : String(error)}\n`);
    process.exit(1);
  });

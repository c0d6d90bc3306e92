import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// The password policy (settings `passwordPolicy`): strength refused with zxcvbn's feedback
// wherever a password is set, never at login (which only recommends a change); breaches by the
// k-anonymity range API against a range server on 127.0.0.1 that answers as the real one does
// (upper-case `SUFFIX:COUNT` lines, CRLF, padding lines of count 0).

const HEADER = 'svc-store-codename';
// Scores 0 (a common password), 9 characters: the length rule lets it through.
const WEAK = 'password1';
// Strong by zxcvbn (score 4) and known from breaches by the range server below.
const BREACHED = 'correct horse battery staple';
const ALSO_BREACHED = 'Tr0ub4dor&3';
const BREACH_COUNT = 3_861;

const sha1 = (password: string) => createHash('sha1').update(password).digest('hex').toUpperCase();

// What the range server sent of an oversized answer, and whether the client dropped the connection.
interface Oversized {
  sent: number;
  closedEarly: boolean;
}

// A range server as api.pwnedpasswords.com/range/{prefix}: `mode` says how it behaves now.
// `endless` streams padding lines, 16 KB every 10 ms, for as long as the client reads;
// `declared` announces a 50 MB body (Content-Length) and then sends nothing.
class RangeServer {
  readonly requests: { url: string; headers: IncomingHttpHeaders }[] = [];
  mode: 'ok' | 'error' | 'reset' | 'slow' | 'endless' | 'declared' = 'ok';
  oversized: Oversized[] = [];
  url = '';
  private readonly known = new Map<string, number>();
  private server!: Server;

  breached(password: string, count: number): void {
    this.known.set(sha1(password), count);
  }

  asked(password: string): number {
    return this.requests.filter((r) => r.url === `/range/${sha1(password).slice(0, 5)}`).length;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests.push({ url: req.url!, headers: req.headers });
      if (this.mode === 'reset') return void req.socket.destroy();
      if (this.mode === 'error') return void res.writeHead(503).end('unavailable');
      if (this.mode === 'endless' || this.mode === 'declared') return this.oversize(res, this.mode);
      const answer = () => {
        const prefix = /^\/range\/([0-9A-F]{5})$/.exec(req.url!)?.[1];
        if (!prefix) return void res.writeHead(404).end();
        const lines: string[] = [];
        for (const [hash, count] of this.known) if (hash.startsWith(prefix)) lines.push(`${hash.slice(5)}:${count}`);
        // Padding (Add-Padding: true): random suffixes of count 0, as the real API adds them.
        if (req.headers['add-padding'] === 'true') for (let i = 0; i < 800; i++) lines.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`);
        lines.push(`${'0'.repeat(35)}:12`);
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end(lines.sort().join('\r\n'));
      };
      if (this.mode === 'slow') setTimeout(answer, 3_000).unref();
      else answer();
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/range/`;
  }

  private oversize(res: ServerResponse, mode: 'endless' | 'declared'): void {
    const seen: Oversized = { sent: 0, closedEarly: false };
    this.oversized.push(seen);
    const line = `${'A'.repeat(35)}:0\r\n`;
    const chunk = Buffer.from(line.repeat(Math.floor(16_384 / line.length)));
    res.writeHead(200, { 'Content-Type': 'text/plain', ...(mode === 'declared' && { 'Content-Length': String(50 * 1024 * 1024) }) });
    res.flushHeaders();
    const timer = setInterval(() => {
      if (mode === 'endless') res.write(chunk, () => (seen.sent += chunk.length));
    }, 10);
    // The answer never completes: a close is the client hanging up.
    res.on('close', () => {
      clearInterval(timer);
      seen.closedEarly = !res.writableFinished;
    });
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function registerOwner(t: TestApp, password: string, overrides: Record<string, unknown> = {}) {
  return t.http.post('/auth-api/v1/registerstoreowner').send({ email: uniqueEmail(), password, fullname: 'Store Owner', store: { name: unique('Store ') }, ...overrides });
}

function registerUser(t: TestApp, store: { codename: string }, password: string, overrides: Record<string, unknown> = {}) {
  return t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email: uniqueEmail(), password, fullname: 'Ada Lovelace', ...overrides });
}

// 400 PasswordTooWeak with the score and the library's feedback, for a form to show.
function expectTooWeak(res: { status: number; body: Record<string, unknown> }, warning: RegExp = /./): void {
  expectError(res, 400, 'PasswordTooWeak');
  expect(res.body).toMatchObject({ score: expect.any(Number), minScore: 2, feedback: { warning: expect.stringMatching(warning), suggestions: expect.any(Array) } });
  expect(res.body.score as number).toBeLessThan(2);
  const { suggestions } = res.body.feedback as { suggestions: string[] };
  expect(suggestions.length).toBeGreaterThan(0);
  // The sentence a person reads says what to do, not the estimator's score.
  const detail = res.body.detail as string;
  expect(detail).toMatch(/^the password is too easy to guess\b/);
  expect(detail).toContain(suggestions[0]);
  expect(detail).not.toMatch(/\bscores?\b|is required/);
}

describe('password policy', () => {
  const range = new RangeServer();
  // The shipped rules (minScore 2), breaches refused, a range service that does not answer allowed.
  let t: TestApp;
  // No strength rule (to give users weak passwords), breaches refused, an unavailable range
  // service refused, sooner.
  let lenient: TestApp;
  // An unavailable range service refused, with a timeout far longer than any test waits: what
  // ends an oversized answer early is the size cap, not the timeout.
  let patient: TestApp;
  let store: RegisteredStore;
  let owner: string;

  beforeAll(async () => {
    await range.start();
    range.breached(BREACHED, 117);
    range.breached(ALSO_BREACHED, BREACH_COUNT);
    t = await startApp({
      settings: {
        passwordPolicy: { rejectBreached: true, breachedCheck: { rangeUrl: range.url, timeoutMs: 800, onUnavailable: 'allow' } },
        verification: { verificationMode: 'testMode', flows: { 'password-reset-by-email': { enabled: true } } },
      },
    });
    lenient = await startApp({
      settings: { passwordPolicy: { minScore: 0, rejectBreached: true, breachedCheck: { rangeUrl: range.url, timeoutMs: 400, onUnavailable: 'refuse' } } },
    });
    patient = await startApp({
      settings: { passwordPolicy: { minScore: 0, rejectBreached: true, breachedCheck: { rangeUrl: range.url, timeoutMs: 15_000, onUnavailable: 'refuse' } } },
    });
    store = await registerStore(t.http);
    owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await lenient?.close();
    await patient?.close();
    await range.stop();
  });

  it('GET /auth-api/password-policy answers the rules a form needs, in the envelope, in any store', async () => {
    const res = await t.http.get('/auth-api/password-policy').set(HEADER, store.codename).expect(200);
    expect(res.body).toMatchObject({ status: 'OK', dataName: 'passwordPolicy', action: 'get', rowCount: 1 });
    expect(res.body.passwordPolicy).toEqual({ minLength: 8, maxBytes: 72, minScore: 2, rejectBreached: true, userInputs: true });
    const root = await lenient.http.get('/auth-api/password-policy').expect(200);
    expect(root.body.passwordPolicy).toMatchObject({ minScore: 0, rejectBreached: true });
  });

  describe('strength, wherever a password is set', () => {
    it('store registration with its owner', async () => {
      expectTooWeak(await registerOwner(t, WEAK), /common/);
      // Shorter than minLength: today's WeakPassword.
      expectError(await registerOwner(t, 'short'), 400, 'WeakPassword');
      await registerOwner(t, 'a brand new passphrase').expect(201);
    });

    it("public user registration, with the user's own name and store name as guessable words", async () => {
      expectTooWeak(await registerUser(t, store, WEAK));
      // Strong in general (score 4 alone), weak for this person and this store.
      expectTooWeak(await registerUser(t, store, 'quillfeather42', { fullname: 'Theodora Quillfeather' }), /personal/);
      await registerUser(t, store, 'quillfeather42').expect(201);
      const named = await registerStore(t.http, { store: { name: unique('Zephyrine ') } });
      expectTooWeak(await registerUser(t, named, 'zephyrine2024'), /personal/);
      const email = `${unique('marmaduke')}@example.com`;
      expectTooWeak(await registerUser(t, store, `${email.split('@')[0]}!`, { email }), /personal/);
    });

    it('user creation by an administrator', async () => {
      const create = (password: string) =>
        t.http.post('/auth-api/users').set(HEADER, store.codename).set('Authorization', `Bearer ${owner}`).send({ email: uniqueEmail(), password, fullname: 'Grace Hopper' });
      expectTooWeak(await create(WEAK));
      await create('another good password 42').expect(201);
    });

    it('password change, by the user and by an administrator', async () => {
      const email = uniqueEmail();
      const user = await registerUser(t, store, PASSWORD, { email }).expect(201);
      const id = user.body.user.id as string;
      const own = await login(t.http, email, PASSWORD, store.codename);
      const patch = (token: string, body: object) => t.http.patch(`/auth-api/v1/users/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send(body);
      expectTooWeak(await patch(own.accessToken, { password: WEAK, currentPassword: PASSWORD }));
      expectTooWeak(await patch(owner, { password: 'qwertyuiop' }));
      await patch(own.accessToken, { password: 'a brand new password 42', currentPassword: PASSWORD }).expect(200);
      await login(t.http, email, 'a brand new password 42', store.codename);
      // The name the same change sets counts as the user's own word already.
      expectTooWeak(await patch(owner, { password: 'fennimore1!', fullname: 'Fennimore Cooper' }), /personal/);
      await patch(owner, { password: 'fennimore1!' }).expect(200);
      await login(t.http, email, 'fennimore1!', store.codename);
    });

    it('password reset: refused with the code still usable, then accepted', async () => {
      const email = uniqueEmail();
      await registerUser(t, store, PASSWORD, { email }).expect(201);
      const flow = '/auth-api/verification-services/password-reset-by-email';
      const started = await t.http.post(`${flow}/start`).set(HEADER, store.codename).send({ email }).expect(200);
      const complete = (password: string) => t.http.post(`${flow}/complete`).set(HEADER, store.codename).send({ email, secretCode: started.body.secretCode, password });
      expectTooWeak(await complete(WEAK));
      const breached = await complete(BREACHED);
      expectError(breached, 400, 'PasswordBreached');
      expect(breached.body.count).toBe(117);
      await complete('a password set by reset').expect(200);
      await login(t.http, email, 'a password set by reset', store.codename);
    });
  });

  describe('login never applies the policy', () => {
    it('a weak existing password still signs in, with passwordChangeRecommended: true; a strong one without it', async () => {
      const weakStore = await registerStore(lenient.http, { password: WEAK });
      const res = await t.http.post('/auth-api/login').set(HEADER, weakStore.codename).send({ username: weakStore.ownerEmail, password: WEAK }).expect(200);
      expect(res.body.passwordChangeRecommended).toBe(true);
      expect(res.body.accessToken).toEqual(expect.any(String));
      // The app without a strength rule has nothing to recommend.
      const there = await lenient.http.post('/auth-api/login').set(HEADER, weakStore.codename).send({ username: weakStore.ownerEmail, password: WEAK }).expect(200);
      expect(there.body).not.toHaveProperty('passwordChangeRecommended');
      const strong = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
      expect(strong.body).not.toHaveProperty('passwordChangeRecommended');
      // Asked again (the verdict is kept per stored password): the same answers.
      const again = await t.http.post('/auth-api/login').set(HEADER, weakStore.codename).send({ username: weakStore.ownerEmail, password: WEAK }).expect(200);
      expect(again.body.passwordChangeRecommended).toBe(true);
      expect((await login(t.http, store.ownerEmail, PASSWORD, store.codename)).body).not.toHaveProperty('passwordChangeRecommended');
    });

    it('a new password gets a new verdict: weak to strong drops the recommendation', async () => {
      const weakStore = await registerStore(lenient.http, { password: WEAK });
      const first = await t.http.post('/auth-api/login').set(HEADER, weakStore.codename).send({ username: weakStore.ownerEmail, password: WEAK }).expect(200);
      expect(first.body.passwordChangeRecommended).toBe(true);
      await t.http
        .patch(`/auth-api/v1/users/${weakStore.ownerId}`)
        .set(HEADER, weakStore.codename)
        .set('Authorization', `Bearer ${first.body.accessToken}`)
        .send({ currentPassword: WEAK, password: PASSWORD })
        .expect(200);
      const after = await t.http.post('/auth-api/login').set(HEADER, weakStore.codename).send({ username: weakStore.ownerEmail, password: PASSWORD }).expect(200);
      expect(after.body).not.toHaveProperty('passwordChangeRecommended');
    });

    it('a breached existing password signs in without asking the range service', async () => {
      const breachedStore = await registerStore(lenient.http, { password: 'a password breached later' });
      range.breached('a password breached later', 7);
      const before = range.requests.length;
      const res = await t.http.post('/auth-api/login').set(HEADER, breachedStore.codename).send({ username: breachedStore.ownerEmail, password: 'a password breached later' }).expect(200);
      expect(res.body).not.toHaveProperty('passwordChangeRecommended');
      expect(range.requests.length).toBe(before);
    });
  });

  describe('breaches, by the k-anonymity range API', () => {
    it('a breached password is refused with its count; only 5 hex characters of its SHA-1 leave, with Add-Padding: true', async () => {
      const before = range.requests.length;
      const res = await registerUser(t, store, ALSO_BREACHED);
      expectError(res, 400, 'PasswordBreached');
      expect(res.body.count).toBe(BREACH_COUNT);
      const sent = range.requests.slice(before);
      expect(sent).toHaveLength(1);
      const hash = sha1(ALSO_BREACHED);
      expect(sent[0].url).toBe(`/range/${hash.slice(0, 5)}`);
      expect(sent[0].headers['add-padding']).toBe('true');
      // Nothing else of the hash (in any case) nor the password is in what was sent.
      const everything = JSON.stringify(sent).toUpperCase();
      expect(everything).not.toContain(hash.slice(5, 15));
      expect(everything).not.toContain(ALSO_BREACHED.toUpperCase());
    });

    it('an unknown password is accepted', async () => {
      const password = `unknown ${randomBytes(6).toString('hex')} phrase`;
      await registerUser(t, store, password).expect(201);
      expect(range.asked(password)).toBe(1);
    });

    it('one prefix is asked once a minute at most: a second check, and concurrent checks, do not reach the server again', async () => {
      const password = `cached ${randomBytes(6).toString('hex')} phrase`;
      await registerUser(t, store, password).expect(201);
      await registerUser(t, store, password).expect(201);
      expect(range.asked(password)).toBe(1);
      // Concurrent lookups of one new prefix share one request.
      const together = `together ${randomBytes(6).toString('hex')} phrase`;
      const answers = await Promise.all([1, 2, 3, 4].map(() => registerUser(t, store, together)));
      expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      expect(range.asked(together)).toBe(1);
      // A breached answer is cached too: refused again without a request.
      const before = range.requests.length;
      expectError(await registerUser(t, store, ALSO_BREACHED), 400, 'PasswordBreached');
      expect(range.requests.length).toBe(before);
    });

    it.each(['error', 'reset', 'slow'] as const)('a range service that answers %s: onUnavailable honoured within timeoutMs', async (mode) => {
      range.mode = mode;
      try {
        // allow (timeoutMs 800): accepted.
        let began = Date.now();
        await registerUser(t, store, `allowed ${randomBytes(6).toString('hex')} phrase`).expect(201);
        expect(Date.now() - began).toBeLessThan(2_500);
        // refuse (timeoutMs 400): 503 PasswordCheckUnavailable, nothing registered.
        const password = `refused ${randomBytes(6).toString('hex')} phrase`;
        began = Date.now();
        const res = await registerOwner(lenient, password);
        const took = Date.now() - began;
        expectError(res, 503, 'PasswordCheckUnavailable');
        expect(took).toBeLessThan(2_000);
        if (mode === 'slow') expect(took).toBeGreaterThanOrEqual(350);
        // A failure is not cached: once the service is back, the same password is checked and accepted.
        range.mode = 'ok';
        await registerOwner(lenient, password).expect(201);
      } finally {
        range.mode = 'ok';
      }
    });

    // A real answer is under 40 KB: a larger one is not read whole (nor at all when its
    // Content-Length says so), the connection is dropped, and the check answers as an outage.
    it.each(['endless', 'declared'] as const)('an oversized answer (%s) is cut off at once: the connection dropped, onUnavailable honoured', async (mode) => {
      range.mode = mode;
      range.oversized = [];
      try {
        const password = `oversized ${randomBytes(6).toString('hex')} phrase`;
        const began = Date.now();
        const res = await registerOwner(patient, password);
        const took = Date.now() - began;
        expectError(res, 503, 'PasswordCheckUnavailable');
        // Far sooner than the 15 s timeout.
        expect(took).toBeLessThan(3_000);
        // The server sees the client hang up before its answer was complete.
        for (let i = 0; i < 50 && !range.oversized[0]?.closedEarly; i++) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(range.oversized).toEqual([{ sent: expect.any(Number), closedEarly: true }]);
        // Read up to the cap (256 KB) and what sockets buffer, never the answer whole.
        expect(range.oversized[0].sent).toBeLessThan(mode === 'declared' ? 1 : 4 * 1024 * 1024);
        range.mode = 'ok';
        await registerOwner(patient, password).expect(201);
      } finally {
        range.mode = 'ok';
      }
    });
  });
});

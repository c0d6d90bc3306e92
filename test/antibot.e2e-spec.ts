import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { solveChallenge } from 'altcha-lib/v1';
import { expectError, PASSWORD, startApp, unique, uniqueEmail, type TestApp } from './helpers.js';

const HEADER = 'x-challenge-response';
const owner = () => ({ email: uniqueEmail(), password: PASSWORD, fullname: 'Human Owner', store: { name: unique('Store ') } });

describe('anti-bot challenge off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('registers without a challenge, and serves no ALTCHA challenge', async () => {
    await t.http.post('/auth-api/v1/registerstoreowner').send(owner()).expect(201);
    expectError(await t.http.get('/auth-api/challenge'), 404, 'RouteNotFound');
  });
});

describe('anti-bot challenge: ALTCHA (self-hosted proof of work)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      settings: {
        antiBot: { provider: 'altcha', secret: 'altcha-hmac-key-for-tests', verifyUrl: null, altchaMaxNumber: 5000, altchaExpireSeconds: 60 },
        verification: { verificationMode: 'testMode', flows: { 'email-verification': { enabled: true }, 'password-reset-by-email': { enabled: true } } },
      },
    });
  });
  afterAll(() => t.close());

  // What the browser widget does: fetch a challenge, find the number, send the payload.
  async function solved(): Promise<string> {
    const c = (await t.http.get('/auth-api/challenge').expect(200)).body as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber: number };
    const solution = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
    return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: solution!.number, salt: c.salt, signature: c.signature })).toString('base64');
  }

  it('registers a store owner and a store user with a solved challenge', async () => {
    const res = await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, await solved()).send(owner()).expect(201);
    await t.http
      .post('/auth-api/v1/registerstoreuser')
      .set('svc-store-codename', res.body.store.codename)
      .set(HEADER, await solved())
      .send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Human User' })
      .expect(201);
  });

  it('refuses a missing solution with 403 ChallengeFailed, naming the header', async () => {
    const res = await t.http.post('/auth-api/v1/registerstoreowner').send(owner());
    expectError(res, 403, 'ChallengeFailed');
    expect(res.body.detail).toContain(HEADER);
    const store = await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, await solved()).send(owner()).expect(201);
    expectError(await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.body.store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Bot' }), 403, 'ChallengeFailed');
  });

  it('guards the verification and password-reset starts: 403 ChallengeFailed without a solution, the code with one', async () => {
    const email = uniqueEmail();
    const store = (await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, await solved()).send({ ...owner(), email }).expect(201)).body.store.codename as string;
    for (const flow of ['password-reset-by-email', 'email-verification']) {
      const path = `/auth-api/verification-services/${flow}/start`;
      const refused = await t.http.post(path).set('svc-store-codename', store).send({ email });
      expectError(refused, 403, 'ChallengeFailed');
      expect(refused.body.detail).toContain(HEADER);
      const started = await t.http.post(path).set('svc-store-codename', store).set(HEADER, await solved()).send({ email }).expect(200);
      expect(started.body).toMatchObject({ status: 'OK', codeIndex: 1, secretCode: expect.stringMatching(/^\d{6}$/) });
    }
  });

  it('refuses a wrong number, a forged signature, garbage, and a solution used twice', async () => {
    const good = await solved();
    const payload = JSON.parse(Buffer.from(good, 'base64').toString()) as Record<string, unknown>;
    const wrong = Buffer.from(JSON.stringify({ ...payload, number: (payload.number as number) + 1 })).toString('base64');
    const forged = Buffer.from(JSON.stringify({ ...payload, signature: 'f'.repeat(64) })).toString('base64');
    for (const bad of [wrong, forged, 'not-a-payload', Buffer.from('{"a":1}').toString('base64')]) {
      expectError(await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, bad).send(owner()), 403, 'ChallengeFailed');
    }
    await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, good).send(owner()).expect(201);
    expectError(await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, good).send(owner()), 403, 'ChallengeFailed');
  });
});

describe('anti-bot challenge: a token provider (Turnstile protocol) with a local verify URL', () => {
  let t: TestApp;
  let verifier: Server;
  const seen: URLSearchParams[] = [];
  let down = false;
  beforeAll(async () => {
    verifier = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (down) return res.writeHead(502).end();
        const form = new URLSearchParams(body);
        seen.push(form);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: form.get('response') === 'human-token' && form.get('secret') === 'turnstile-secret' }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const { port } = verifier.address() as { port: number };
    t = await startApp({ settings: { antiBot: { provider: 'turnstile', secret: 'turnstile-secret', verifyUrl: `http://127.0.0.1:${port}/siteverify`, altchaMaxNumber: 100000, altchaExpireSeconds: 300 } } });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => verifier.close(resolve));
  });

  it('accepts a token the provider confirms, sending it the secret, token and client address', async () => {
    await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, 'human-token').send(owner()).expect(201);
    expect(seen.at(-1)?.get('response')).toBe('human-token');
    expect(seen.at(-1)?.get('remoteip')).toMatch(/127\.0\.0\.1/);
  });

  it('refuses a token the provider rejects (403) and answers 503 when it cannot be asked', async () => {
    expectError(await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, 'bot-token').send(owner()), 403, 'ChallengeFailed');
    down = true;
    try {
      expectError(await t.http.post('/auth-api/v1/registerstoreowner').set(HEADER, 'human-token').send(owner()), 503, 'ServiceUnavailable');
    } finally {
      down = false;
    }
  });

  it('leaves other routes alone (login)', async () => {
    await t.http.post('/auth-api/login').send({ username: 'nobody@example.com', password: 'whatever pass' }).expect(401);
  });
});

describe('anti-bot settings', () => {
  it('a token provider without a secret stops the boot', async () => {
    await expect(startApp({ settings: { antiBot: { provider: 'hcaptcha', secret: null, verifyUrl: null, altchaMaxNumber: 100000, altchaExpireSeconds: 300 } } })).rejects.toThrow(/antiBot\.secret/);
  });
});

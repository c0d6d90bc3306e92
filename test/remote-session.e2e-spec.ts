import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ManualClock } from '../src/platform/clock/clock.js';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type TestApp } from './helpers.js';
import { remoteSessionSettings, startRemoteSessionService, type RemoteSessionPeer } from './oauth-peers.js';

// Bearer tokens of a remote service (settings remoteSession), against a small remote service
// on loopback that signs its tokens with a key of its own and answers for its sessions.

async function storeWithUser(t: TestApp, name: string, email: string): Promise<string> {
  const store = await registerStore(t.http, { store: { name } });
  expect(store.codename).toBe(name);
  await t.http.post('/auth-api/v1/registerstoreuser').set('svc-store-codename', store.codename).send({ email, password: PASSWORD, fullname: 'Remote User' }).expect(201);
  return store.codename;
}

describe('remote sessions (GET, session id in the address)', () => {
  let t: TestApp;
  let peer: RemoteSessionPeer;
  const clock = new ManualClock();
  // Codenames come from store names: the one the settings name, and another.
  const trusting = unique('remote');
  const other = unique('other');

  beforeAll(async () => {
    peer = await startRemoteSessionService();
    t = await startApp({
      clock,
      settings: {
        remoteSession: remoteSessionSettings(peer, [trusting]),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await peer?.close();
  });

  const call = (path: string, codename: string, token: string) => t.http.get(path).set('svc-store-codename', codename).set('Authorization', `Bearer ${token}`);
  const asked = (sid: string) => peer.requests.filter((r) => r.path === `/sessions/${sid}`).length;

  it("signs in the local user with the remote session's email, asks once per cache period, and stops when the session ends", async () => {
    const email = uniqueEmail();
    await storeWithUser(t, trusting, email);
    const sid = unique('s');
    peer.sessions.set(sid, { id: sid, user: { email: email.toUpperCase() } });
    const token = await peer.sign(sid);

    const me = await call('/auth-api/currentuser', trusting, token).expect(200);
    expect(me.body).toMatchObject({ email, tenantId: expect.any(String) });
    await call('/auth-api/sessions', trusting, token).expect(200);
    expect(asked(sid)).toBe(1);
    expect(peer.requests.find((r) => r.path === `/sessions/${sid}`)?.method).toBe('GET');

    // Ended at the remote service: honoured until the cached answer is older than cacheSeconds.
    peer.sessions.delete(sid);
    await call('/auth-api/sessions', trusting, token).expect(200);
    clock.advance(6_000);
    expectError(await call('/auth-api/sessions', trusting, token), 401, 'RemoteSessionEnded');
    expect(asked(sid)).toBe(2);

    // The service's own tokens are untouched.
    const own = await login(t.http, email, PASSWORD, trusting);
    await call('/auth-api/sessions', trusting, own.accessToken).expect(200);
  });

  it('a remote user without an account here, or a session the remote service does not know, is 401', async () => {
    const sid = unique('s');
    peer.sessions.set(sid, { user: { email: uniqueEmail() } });
    expectError(await call('/auth-api/sessions', trusting, await peer.sign(sid)), 401, 'RemoteSessionEnded');
    expectError(await call('/auth-api/sessions', trusting, await peer.sign(unique('gone'))), 401, 'RemoteSessionEnded');
  });

  it("a token not signed with the remote service's keys, or for another audience, is 401 without asking for the session", async () => {
    const sid = unique('s');
    peer.sessions.set(sid, { user: { email: uniqueEmail() } });
    expectError(await call('/auth-api/sessions', trusting, await peer.sign(sid, {}, 'stranger')), 401, 'Unauthorized');
    expectError(await call('/auth-api/sessions', trusting, await peer.sign(sid, { aud: 'someone-else' })), 401, 'Unauthorized');
    expectError(await call('/auth-api/sessions', trusting, await peer.sign(sid, { exp: Math.floor(clock.now().getTime() / 1000) - 60 })), 401, 'Unauthorized');
    expect(asked(sid)).toBe(0);
  });

  it('a store the settings do not name refuses a valid remote token even for a user of the same email', async () => {
    const email = uniqueEmail();
    await storeWithUser(t, other, email);
    const sid = unique('s');
    peer.sessions.set(sid, { user: { email } });
    expectError(await call('/auth-api/sessions', other, await peer.sign(sid)), 401, 'Unauthorized');
    expect(asked(sid)).toBe(0);
  });

  it('a failing or silent remote service is 503 RemoteSessionUnavailable, never 500', async () => {
    const email = uniqueEmail();
    const sid = unique('s');
    peer.sessions.set(sid, { user: { email } });
    try {
      peer.sessionMode = 500;
      const failed = await call('/auth-api/currentuser', trusting, await peer.sign(sid));
      expectError(failed, 503, 'RemoteSessionUnavailable');
      expect(failed.body.providerStatus).toBe(500);
      expect(failed.headers['retry-after']).toBe('5');
      peer.sessionMode = 'hang';
      const began = Date.now();
      expectError(await call('/auth-api/currentuser', trusting, await peer.sign(sid)), 503, 'RemoteSessionUnavailable');
      expect(Date.now() - began).toBeLessThan(5_000);
    } finally {
      peer.sessionMode = 'answer';
    }
  });
});

describe('remote sessions (POST, configured headers)', () => {
  let t: TestApp;
  let peer: RemoteSessionPeer;
  const codename = unique('remote');

  beforeAll(async () => {
    peer = await startRemoteSessionService();
    t = await startApp({
      env: { REMOTE_SESSION_KEY: 'remote-key-1' },
      settings: {
        remoteSession: {
          enabled: true,
          issuer: peer.issuer,
          jwksUrl: `${peer.url}/jwks.json`,
          sessionIdPath: 'session.id',
          requestUrl: `${peer.url}/sessions/lookup`,
          method: 'POST',
          sessionLocation: 'data.session',
          emailPath: 'email',
          stores: [codename],
          headers: { 'x-api-key': { env: 'REMOTE_SESSION_KEY' } },
        },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await peer?.close();
  });

  it("posts the session id found at sessionIdPath with the configured headers; unreadable keys are 503 until they answer", async () => {
    const email = uniqueEmail();
    await storeWithUser(t, codename, email);
    const sid = unique('s');
    peer.sessions.set(sid, { email });
    const token = await peer.sign('ignored', { session: { id: sid } });
    const call = () => t.http.get('/auth-api/currentuser').set('svc-store-codename', codename).set('Authorization', `Bearer ${token}`);

    peer.jwksMode = 500;
    expectError(await call(), 503, 'RemoteSessionUnavailable');
    peer.jwksMode = 'answer';
    expect((await call().expect(200)).body.email).toBe(email);
    const sent = peer.requests.find((r) => r.path === '/sessions/lookup')!;
    expect(sent).toMatchObject({ method: 'POST', headers: { 'x-api-key': 'remote-key-1' } });
    expect(JSON.parse(sent.body)).toEqual({ sessionId: sid });
  });
});

describe('remote session settings', () => {
  const base = { enabled: true, issuer: 'https://remote.example/', jwksUrl: 'https://remote.example/jwks.json', sessionIdPath: 'sid', requestUrl: 'https://remote.example/sessions/{sessionId}', method: 'GET' as const, stores: ['a'] };

  it('an incomplete block stops the boot with the missing keys named', async () => {
    const { jwksUrl: _jwks, stores: _stores, ...incomplete } = base;
    await expect(startApp({ settings: { remoteSession: incomplete } })).rejects.toThrow(/settings\.remoteSession\.jwksUrl[\s\S]*settings\.remoteSession\.stores|settings\.remoteSession\.stores[\s\S]*settings\.remoteSession\.jwksUrl/);
  });

  it('GET without {sessionId} in the address, or a header secret that is not set, stops the boot', async () => {
    await expect(startApp({ settings: { remoteSession: { ...base, requestUrl: 'https://remote.example/session' } } })).rejects.toThrow(/settings\.remoteSession\.requestUrl must contain \{sessionId\}/);
    await expect(startApp({ settings: { remoteSession: { ...base, headers: { authorization: { env: 'NO_REMOTE_KEY' } } } } })).rejects.toThrow(
      /settings\.remoteSession\.headers\.authorization: environment variable NO_REMOTE_KEY is not set/,
    );
  });

  it('a disabled block needs nothing else', async () => {
    const t = await startApp({ settings: { remoteSession: { enabled: false } } });
    await t.close();
  });
});

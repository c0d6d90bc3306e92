import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ManualClock } from '../src/platform/clock/clock.js';
import { SessionRepository } from '../src/identity/session/session.repository.js';
import { connectSocket, listen, openSse, type SocketClient } from './event-clients.js';
import { expectError, login, PASSWORD, registerStore, startApp, uniqueEmail, waitFor, type Login, type RegisteredStore, type TestApp } from './helpers.js';

// Device sessions seen from a client of the real app: what each session says of its device and
// address, when it was last seen, signing out other devices, an admin ending a user's sessions,
// and the `session-ended` event the user's other devices hear.

const SESSIONS = '/auth-api/sessions';
const CURRENT = '/auth-api/currentuser';
const USERS = '/auth-api/users';
const V1 = '/auth-api/v1/users';
const HEADER = 'svc-store-codename';
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const CHROME_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1';
const LOOPBACK = /^(::ffff:)?127\.0\.0\.1$|^::1$/;

interface SessionItem {
  sessionId: string;
  createdAt: string;
  lastSeenAt: string;
  ip: string | null;
  userAgent: string | null;
  device: { browser: string | null; os: string | null; type: string };
  current: boolean;
}

const bearer = (token: string) => `Bearer ${token}`;

// A login from a device: its user agent, and what a proxy in front would add.
async function loginFrom(t: TestApp, store: RegisteredStore, email: string, userAgent: string, forwardedFor?: string): Promise<Login> {
  const req = t.http.post('/auth-api/login').set(HEADER, store.codename).set('User-Agent', userAgent).send({ username: email, password: PASSWORD });
  if (forwardedFor) req.set('X-Forwarded-For', forwardedFor);
  const res = await req.expect(200);
  return { accessToken: res.body.accessToken, userBucketToken: res.body.userBucketToken, sessionId: res.body.sessionId, userId: res.body.userId, body: res.body };
}

async function mySessions(t: TestApp, store: RegisteredStore, token: string): Promise<SessionItem[]> {
  const res = await t.http.get(SESSIONS).set(HEADER, store.codename).set('Authorization', bearer(token)).expect(200);
  return res.body.sessions;
}

function me(t: TestApp, store: RegisteredStore, token: string) {
  return t.http.get(CURRENT).set(HEADER, store.codename).set('Authorization', bearer(token));
}

// A user the store's owner creates (with a role when given).
async function addUser(t: TestApp, store: RegisteredStore, ownerToken: string, roleId?: string): Promise<{ id: string; email: string }> {
  const email = uniqueEmail();
  const res = await t.http
    .post(USERS)
    .set(HEADER, store.codename)
    .set('Authorization', bearer(ownerToken))
    .send({ email, password: PASSWORD, fullname: 'Member', ...(roleId && { roleId }) })
    .expect(201);
  return { id: res.body.user.id, email };
}

async function subscribed(client: SocketClient, topics: string[]): Promise<{ topics: string[] }> {
  client.socket.emit('subscribe', { topics });
  return client.next('subscribed');
}

describe('device sessions', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let base: string;
  const open: { close(): void }[] = [];
  const track = <T extends { close(): void }>(c: T): T => (open.push(c), c);

  beforeAll(async () => {
    t = await startApp({ clock });
    base = await listen(t);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await t?.close();
  });

  describe('what a session shows', () => {
    it('names each device from its user agent, and the address the login came from', async () => {
      const store = await registerStore(t.http);
      const desktop = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const phone = await loginFrom(t, store, store.ownerEmail, SAFARI_IPHONE);
      const chromeOnPhone = await loginFrom(t, store, store.ownerEmail, CHROME_IPHONE);
      const sessions = await mySessions(t, store, phone.accessToken);
      const byId = new Map(sessions.map((s) => [s.sessionId, s]));
      expect(byId.get(desktop.sessionId)).toMatchObject({ userAgent: CHROME_WINDOWS, device: { browser: 'Chrome 124', os: 'Windows 10', type: 'desktop' }, current: false });
      expect(byId.get(phone.sessionId)).toMatchObject({ userAgent: SAFARI_IPHONE, device: { browser: 'Mobile Safari 17', os: 'iOS 17.4', type: 'mobile' }, current: true });
      expect(byId.get(chromeOnPhone.sessionId)).toMatchObject({ device: { browser: 'Chrome 124', os: 'iOS 17.4', type: 'mobile' }, current: false });
      for (const s of sessions) expect(s.ip).toMatch(LOOPBACK);
    });

    it('ignores X-Forwarded-For without TRUST_PROXY: anyone could write it', async () => {
      const store = await registerStore(t.http);
      const l = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS, '203.0.113.7');
      const [session] = await mySessions(t, store, l.accessToken);
      expect(session.ip).toMatch(LOOPBACK);
    });

    it('shows the creation time as last seen until the session is used, then when it was, written at most once a minute', async () => {
      const store = await registerStore(t.http);
      const l = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const created = (await mySessions(t, store, l.accessToken))[0];
      expect(created.lastSeenAt).toBe(created.createdAt);
      // the listing itself was a use of the session: seen at the login's time
      const lastSeen = async () => (await mySessions(t, store, l.accessToken))[0].lastSeenAt;

      const repo = t.app.get(SessionRepository);
      const touch = repo.touch.bind(repo);
      const writes: string[] = [];
      repo.touch = (storeId, id, now, staleBefore) => {
        if (id === l.sessionId) writes.push(now.toISOString());
        return touch(storeId, id, now, staleBefore);
      };
      try {
        clock.advance(61_000);
        const first = clock.now().toISOString();
        await me(t, store, l.accessToken).expect(200);
        expect(await waitFor('the first sight', async () => ((await lastSeen()) === first ? first : undefined))).toBe(first);

        // within the minute: many requests, no write
        clock.advance(30_000);
        for (let i = 0; i < 10; i++) await me(t, store, l.accessToken).expect(200);
        expect(await lastSeen()).toBe(first);
        expect(writes).toEqual([first]);

        // a minute after the last write, the next request writes again
        clock.advance(31_000);
        const second = clock.now().toISOString();
        await me(t, store, l.accessToken).expect(200);
        expect(await waitFor('the next sight', async () => ((await lastSeen()) === second ? second : undefined))).toBe(second);
        expect(writes).toEqual([first, second]);
      } finally {
        repo.touch = touch;
      }
    });
  });

  describe('signing out other devices', () => {
    it('DELETE /sessions keeps this one and ends the others; their tokens stop working', async () => {
      const store = await registerStore(t.http);
      const old = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const other = await loginFrom(t, store, store.ownerEmail, SAFARI_IPHONE);
      const current = await loginFrom(t, store, store.ownerEmail, CHROME_IPHONE);
      const res = await t.http.delete(SESSIONS).set(HEADER, store.codename).set('Authorization', bearer(current.accessToken)).expect(200);
      expect(res.body).toEqual({ status: 'OK', ended: 2 });
      await me(t, store, old.accessToken).expect(401);
      await me(t, store, other.accessToken).expect(401);
      await me(t, store, current.accessToken).expect(200);
      expect((await mySessions(t, store, current.accessToken)).map((s) => [s.sessionId, s.current])).toEqual([[current.sessionId, true]]);
    });

    it("tells the user's other devices over the event channel (session-ended), not other users", async () => {
      const store = await registerStore(t.http);
      const owner = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const member = await addUser(t, store, owner.accessToken);
      const laptop = await loginFrom(t, store, member.email, CHROME_WINDOWS);
      const phone = await loginFrom(t, store, member.email, SAFARI_IPHONE);
      const tablet = await loginFrom(t, store, member.email, CHROME_IPHONE);
      const colleague = await addUser(t, store, owner.accessToken);
      const colleagueOld = await loginFrom(t, store, colleague.email, SAFARI_IPHONE);
      const colleagueLogin = await loginFrom(t, store, colleague.email, CHROME_WINDOWS);

      const onPhone = track(await connectSocket(base, 'live', { token: bearer(phone.accessToken), tenantCodename: store.codename }));
      const onColleague = track(await connectSocket(base, 'live', { token: bearer(colleagueLogin.accessToken), tenantCodename: store.codename }));
      const sse = track(await openSse(base, '/events/live-sse/stream?topics=sessionEnded', { Authorization: bearer(phone.accessToken), [HEADER]: store.codename }));
      expect((await subscribed(onPhone, ['sessionEnded'])).topics).toEqual(['sessionEnded']);
      expect((await subscribed(onColleague, ['sessionEnded'])).topics).toEqual(['sessionEnded']);
      expect((await sse.next('subscribed')).topics).toEqual(['sessionEnded']);

      // the laptop ends one session, then signs out every other device
      await t.http.delete(`${SESSIONS}/${tablet.sessionId}`).set(HEADER, store.codename).set('Authorization', bearer(laptop.accessToken)).expect(200);
      await t.http.delete(SESSIONS).set(HEADER, store.codename).set('Authorization', bearer(laptop.accessToken)).expect(200);

      const first = await waitFor('the first session-ended', () => sse.events().find((e) => e.data.sessionIds.includes(tablet.sessionId)));
      expect(first).toEqual({ topic: 'sessionEnded', name: 'sessionEnded', data: { storeId: store.storeId, userId: member.id, sessionIds: [tablet.sessionId], _owner: member.id } });
      // the phone hears of the tablet; its own end closes its socket
      const onPhoneFirst = await waitFor('the tablet ended, on the phone', () => onPhone.events().find((e) => e.data.sessionIds.includes(tablet.sessionId)));
      expect(onPhoneFirst.data).toEqual(first.data);
      // the colleague's own sign-out comes later on the same topic: nothing of the member's before it
      await t.http.delete(SESSIONS).set(HEADER, store.codename).set('Authorization', bearer(colleagueLogin.accessToken)).expect(200);
      await waitFor("the colleague's own", () => onColleague.events().find((e) => e.data.sessionIds.includes(colleagueOld.sessionId)));
      expect(onColleague.events().map((e) => e.data.userId)).toEqual([colleague.id]);
    });
  });

  describe("an admin and a user's sessions", () => {
    it("lists a user's sessions with their devices, paged, and marks only the admin's own as current", async () => {
      const store = await registerStore(t.http);
      const owner = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const member = await addUser(t, store, owner.accessToken);
      const a = await loginFrom(t, store, member.email, SAFARI_IPHONE);
      const b = await loginFrom(t, store, member.email, CHROME_WINDOWS);

      const res = await t.http.get(`${V1}/${member.id}/sessions?pageRowCount=1`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', dataName: 'sessions', paging: expect.objectContaining({ totalRowCount: 2 }) });
      expect(res.body.sessions).toHaveLength(1);
      const all = await t.http.get(`${V1}/${member.id}/sessions`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).expect(200);
      const items = all.body.sessions as SessionItem[];
      expect(items.map((s) => s.sessionId).sort()).toEqual([a.sessionId, b.sessionId].sort());
      expect(items.find((s) => s.sessionId === a.sessionId)).toMatchObject({ device: { os: 'iOS 17.4', type: 'mobile' }, current: false, lastSeenAt: expect.any(String) });
      expect(items.every((s) => !s.current)).toBe(true);

      const own = await t.http.get(`${V1}/${owner.userId}/sessions`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).expect(200);
      expect((own.body.sessions as SessionItem[]).map((s) => [s.sessionId, s.current])).toEqual([[owner.sessionId, true]]);
    });

    it("ends every session of a user, and the user's devices hear of it", async () => {
      const store = await registerStore(t.http);
      const owner = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const member = await addUser(t, store, owner.accessToken);
      const a = await loginFrom(t, store, member.email, SAFARI_IPHONE);
      const b = await loginFrom(t, store, member.email, CHROME_WINDOWS);
      const watcher = track(await connectSocket(base, 'live', { token: bearer(owner.accessToken), tenantCodename: store.codename }));
      expect((await subscribed(watcher, ['sessionEnded'])).topics).toEqual(['sessionEnded']);

      const res = await t.http.delete(`${V1}/${member.id}/sessions`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).expect(200);
      expect(res.body).toEqual({ status: 'OK', ended: 2 });
      await me(t, store, a.accessToken).expect(401);
      await me(t, store, b.accessToken).expect(401);
      await me(t, store, owner.accessToken).expect(200);
      const list = await t.http.get(`${V1}/${member.id}/sessions`).set(HEADER, store.codename).set('Authorization', bearer(owner.accessToken)).expect(200);
      expect(list.body.sessions).toEqual([]);
      // a store admin hears of its users' sessions (a private object: the owner and admins)
      const e = await waitFor('session-ended', () => watcher.events().find((x) => x.data.userId === member.id));
      expect(e.data).toEqual({ storeId: store.storeId, userId: member.id, sessionIds: expect.arrayContaining([a.sessionId, b.sessionId]), _owner: member.id });
      expect(e.data.sessionIds).toHaveLength(2);
    });

    it('keeps the admin signed in on this device when it ends its own sessions', async () => {
      const store = await registerStore(t.http);
      const elsewhere = await loginFrom(t, store, store.ownerEmail, SAFARI_IPHONE);
      const here = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const res = await t.http.delete(`${V1}/${here.userId}/sessions`).set(HEADER, store.codename).set('Authorization', bearer(here.accessToken)).expect(200);
      expect(res.body).toEqual({ status: 'OK', ended: 1 });
      await me(t, store, elsewhere.accessToken).expect(401);
      await me(t, store, here.accessToken).expect(200);
    });

    it("refuses a store admin another store's user (404), a higher role (403), and a plain user (403)", async () => {
      const store = await registerStore(t.http);
      const owner = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS);
      const admin = await addUser(t, store, owner.accessToken, 'tenantAdmin');
      const adminLogin = await loginFrom(t, store, admin.email, CHROME_WINDOWS);
      const member = await addUser(t, store, owner.accessToken);
      const memberLogin = await loginFrom(t, store, member.email, SAFARI_IPHONE);
      const other = await registerStore(t.http);
      const otherOwner = await loginFrom(t, other, other.ownerEmail, CHROME_WINDOWS);

      // another store's owner, in its own store, cannot reach this store's user
      const as = (l: Login, s: RegisteredStore, method: 'get' | 'delete', id: string) => t.http[method](`${V1}/${id}/sessions`).set(HEADER, s.codename).set('Authorization', bearer(l.accessToken));
      expectError(await as(otherOwner, other, 'get', member.id), 404, 'UserNotFound');
      expectError(await as(otherOwner, other, 'delete', member.id), 404, 'UserNotFound');
      // a tenantAdmin manages users, not the store's owner
      expectError(await as(adminLogin, store, 'get', owner.userId!), 403, 'Forbidden');
      expectError(await as(adminLogin, store, 'delete', owner.userId!), 403, 'Forbidden');
      // a plain user has no admin role, not even for itself here (it has /sessions)
      expectError(await as(memberLogin, store, 'get', member.id), 403, 'Forbidden');
      expectError(await as(memberLogin, store, 'delete', member.id), 403, 'Forbidden');
      await me(t, store, owner.accessToken).expect(200);
      await me(t, store, memberLogin.accessToken).expect(200);

      // what the tenantAdmin may do: a user of its store
      const ended = await as(adminLogin, store, 'delete', member.id).expect(200);
      expect(ended.body).toEqual({ status: 'OK', ended: 1 });
      await me(t, store, memberLogin.accessToken).expect(401);
    });
  });
});

describe('device sessions behind a trusted proxy (TRUST_PROXY)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { TRUST_PROXY: 'loopback' } });
  });
  afterAll(() => t?.close());

  it('records the client address the proxy forwards', async () => {
    const store = await registerStore(t.http);
    const l = await loginFrom(t, store, store.ownerEmail, CHROME_WINDOWS, '203.0.113.7');
    const [session] = await mySessions(t, store, l.accessToken);
    expect(session.ip).toBe('203.0.113.7');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, login, PASSWORD, registerStore, startApp, uniqueEmail, type Login, type RegisteredStore, type TestApp } from './helpers.js';

// Limits on what grows per user: lists come a page at a time, sessions and uploaded avatar files
// are capped, and an avatar file no longer used is deleted.

const HEADER = 'svc-store-codename';
const SESSIONS = '/auth-api/sessions';
const KEYS = '/auth-api/v1/apikeys';
const USERS = '/auth-api/v1/users';
const UPLOAD = '/auth-api/bucket/userAvatars/upload';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

interface Owner extends RegisteredStore {
  session: Login;
}

async function owner(t: TestApp): Promise<Owner> {
  const store = await registerStore(t.http);
  return { ...store, session: await login(t.http, store.ownerEmail, PASSWORD, store.codename) };
}

const get = (t: TestApp, o: Owner, path: string, token = o.session.accessToken) => t.http.get(path).set(HEADER, o.codename).set('Authorization', `Bearer ${token}`);

describe('paged lists: GET /sessions and GET /v1/apikeys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t?.close());

  it('sessions: newest first, a page at a time, with the spec\'s paging object', async () => {
    const o = await owner(t);
    const more = [await login(t.http, o.ownerEmail, PASSWORD, o.codename), await login(t.http, o.ownerEmail, PASSWORD, o.codename)];
    const first = await get(t, o, `${SESSIONS}?pageRowCount=2`).expect(200);
    expect(first.body.paging).toEqual({ pageNumber: 1, pageRowCount: 2, totalRowCount: 3, pageCount: 2 });
    expect(first.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([more[1].sessionId, more[0].sessionId]);
    const second = await get(t, o, `${SESSIONS}?pageRowCount=2&pageNumber=2`).expect(200);
    expect(second.body.sessions).toEqual([expect.objectContaining({ sessionId: o.session.sessionId, current: true })]);
    expect(second.body.paging).toMatchObject({ pageNumber: 2, totalRowCount: 3 });
    const defaults = await get(t, o, SESSIONS).expect(200);
    expect(defaults.body.paging).toEqual({ pageNumber: 1, pageRowCount: 20, totalRowCount: 3, pageCount: 1 });
    expectError(await get(t, o, `${SESSIONS}?pageNumber=0`), 400, 'ValidationFailed');
  });

  it('API keys: a page at a time; rowCount and paging say how many', async () => {
    const o = await owner(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await t.http.post(KEYS).set(HEADER, o.codename).set('Authorization', `Bearer ${o.session.accessToken}`).send({ name: `k${i}` }).expect(201)).body.apiKey.id);
    }
    const first = await get(t, o, `${KEYS}?pageRowCount=2`).expect(200);
    expect(first.body).toMatchObject({ rowCount: 2, paging: { pageNumber: 1, pageRowCount: 2, totalRowCount: 3, pageCount: 2 } });
    const second = await get(t, o, `${KEYS}?pageRowCount=2&pageNumber=2`).expect(200);
    expect(second.body.rowCount).toBe(1);
    const seen = [...first.body.apiKeys, ...second.body.apiKeys].map((k: { id: string }) => k.id);
    expect(seen.sort()).toEqual([...ids].sort());
    // larger pages are capped at the maximum
    expect((await get(t, o, `${KEYS}?pageRowCount=100000`).expect(200)).body.paging.pageRowCount).toBe(100);
  });
});

describe('maxSessionsPerUser 2', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ settings: { maxSessionsPerUser: 2 } });
  });
  afterAll(() => t?.close());

  it('a third login ends the oldest session; the two newest work; other users are not touched', async () => {
    const o = await owner(t);
    const other = await owner(t);
    const second = await login(t.http, o.ownerEmail, PASSWORD, o.codename);
    await get(t, o, SESSIONS).expect(200); // the oldest session is cached now
    const third = await login(t.http, o.ownerEmail, PASSWORD, o.codename);

    expectError(await get(t, o, USERS), 401, 'Unauthorized');
    await get(t, o, USERS, second.accessToken).expect(200);
    const listed = await get(t, o, SESSIONS, third.accessToken).expect(200);
    expect(listed.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([third.sessionId, second.sessionId]);
    await get(t, other, USERS).expect(200);
  });

  it('a setting outside 1..10000 stops the boot, naming it', async () => {
    await expect(startApp({ settings: { maxSessionsPerUser: 0 } })).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(/maxSessionsPerUser/) });
  });
});

describe('avatar files: avatarUploadsPerUser 3, replaced and deleted avatars', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Avatars are absolute URLs, so the bucket's links need the service's public address.
    t = await startApp({ settings: { avatarUploadsPerUser: 3 }, env: { PUBLIC_URL: 'https://auth.example.com' } });
  });
  afterAll(() => t?.close());

  const upload = async (o: Owner, token = o.session.accessToken): Promise<string> =>
    (await t.http.post(UPLOAD).set(HEADER, o.codename).set('Authorization', `Bearer ${token}`).attach('file', PNG, { filename: 'a.png' }).expect(201)).body.url;
  const status = async (url: string) => (await t.http.get(new URL(url).pathname)).status;
  const setAvatar = (o: Owner, userId: string, avatar: string | null, token = o.session.accessToken) =>
    t.http.patch(`${USERS}/${userId}`).set(HEADER, o.codename).set('Authorization', `Bearer ${token}`).send({ avatar }).expect(200);

  it('beyond the cap the oldest files go, never the current avatar', async () => {
    const o = await owner(t);
    const urls = [await upload(o)];
    await setAvatar(o, o.ownerId, urls[0]);
    for (let i = 0; i < 4; i++) urls.push(await upload(o));
    // 5 uploaded, 3 kept: the current avatar and the two newest
    expect(await Promise.all(urls.map(status))).toEqual([200, 404, 404, 200, 200]);
  });

  it('replacing an avatar deletes the old file; null deletes it and goes back to a generated one', async () => {
    const o = await owner(t);
    const [first, second] = [await upload(o), await upload(o)];
    await setAvatar(o, o.ownerId, first);
    await setAvatar(o, o.ownerId, second);
    expect([await status(first), await status(second)]).toEqual([404, 200]);
    const cleared = await setAvatar(o, o.ownerId, null);
    expect(cleared.body.user.avatar).toMatch(/\/auth-api\/avatars\/[a-f0-9]{32}\.svg$/);
    expect(await status(second)).toBe(404);
  });

  it('a user who points at another user\'s file cannot delete it by replacing it', async () => {
    const o = await owner(t);
    const email = uniqueEmail();
    const member = await t.http.post('/auth-api/users').set(HEADER, o.codename).set('Authorization', `Bearer ${o.session.accessToken}`).send({ email, password: PASSWORD, fullname: 'M' }).expect(201);
    const memberToken = (await login(t.http, email, PASSWORD, o.codename)).accessToken;
    const ownersFile = await upload(o);
    await setAvatar(o, member.body.user.id, ownersFile, memberToken);
    await setAvatar(o, member.body.user.id, 'https://cdn.example.com/m.png', memberToken);
    expect(await status(ownersFile)).toBe(200);
  });

  it('deleting a user deletes its files', async () => {
    const o = await owner(t);
    const email = uniqueEmail();
    const member = await t.http.post('/auth-api/users').set(HEADER, o.codename).set('Authorization', `Bearer ${o.session.accessToken}`).send({ email, password: PASSWORD, fullname: 'M' }).expect(201);
    const memberLogin = await login(t.http, email, PASSWORD, o.codename);
    const url = await upload(o, memberLogin.accessToken);
    expect(await status(url)).toBe(200);
    await t.http.delete(`${USERS}/${member.body.user.id}`).set(HEADER, o.codename).set('Authorization', `Bearer ${o.session.accessToken}`).expect(200);
    expect(await status(url)).toBe(404);
  });
});

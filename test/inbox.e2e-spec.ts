import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NotificationService } from '../src/delivery/notification/notification.service.js';
import { login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp, waitFor } from './helpers.js';

// The in-app inbox (routes at the service root, not under /auth-api) with the shipped settings:
// the user.created rule puts an in-app `welcome` in every new user's inbox. With REDIS_URL the
// app has its own SERVICE_CODENAME, so its BullMQ queue is its own.

const HEADER = 'svc-store-codename';
const LIST = '/notifications';
const UNREAD = '/notifications/unread';
const read = (id: string) => `/notifications/${id}/read`;

interface InboxItem {
  id: string;
  template: string;
  subject: string | null;
  body: string;
  createdAt: string;
  readAt: string | null;
  isRead: boolean;
}

interface Member {
  id: string;
  email: string;
  fullname: string;
  store: RegisteredStore;
  token: string;
}

describe('in-app inbox: /notifications', () => {
  let t: TestApp;
  let storeA: RegisteredStore;
  let storeB: RegisteredStore;
  beforeAll(async () => {
    t = await startApp({ env: { SERVICE_CODENAME: unique('i') } });
    [storeA, storeB] = await Promise.all([registerStore(t.http), registerStore(t.http)]);
  });
  afterAll(() => t?.close());

  function get(path: string, member: { store: RegisteredStore; token: string }, store = member.store) {
    return t.http.get(path).set(HEADER, store.codename).set('Authorization', `Bearer ${member.token}`);
  }

  function post(path: string, member: { store: RegisteredStore; token: string }, store = member.store) {
    return t.http.post(path).set(HEADER, store.codename).set('Authorization', `Bearer ${member.token}`);
  }

  // A self-registered store user, logged in to its store.
  async function member(store: RegisteredStore, fullname = 'Ada Lovelace'): Promise<Member> {
    const email = uniqueEmail();
    const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname }).expect(201);
    const session = await login(t.http, email, PASSWORD, store.codename);
    return { id: res.body.user.id, email, fullname, store, token: session.accessToken };
  }

  // The inbox once it holds `count` notifications (the worker delivers asynchronously).
  async function inboxOf(m: Member, count: number, query = ''): Promise<InboxItem[]> {
    return waitFor(`${count} notifications for ${m.email}`, async () => {
      const res = await get(`${LIST}${query}`, m).expect(200);
      return res.body.paging.totalRowCount >= count ? (res.body.notifications as InboxItem[]) : undefined;
    });
  }

  function sendInApp(m: Member): Promise<string> {
    return t.app.get(NotificationService).send({ channel: 'inApp', template: 'welcome', userId: m.id, storeId: m.store.storeId });
  }

  describe('listing', () => {
    let ada: Member;
    let welcomeId: string;
    let sent: string[];
    beforeAll(async () => {
      ada = await member(storeA);
      [{ id: welcomeId }] = await inboxOf(ada, 1);
      sent = [];
      for (let i = 0; i < 3; i++) sent.push(await sendInApp(ada));
      await inboxOf(ada, 4);
    });

    it("a new user's welcome (the user.created rule) is in the inbox, rendered, unread", async () => {
      const res = await get(`${LIST}?pageNumber=4&pageRowCount=1`, ada).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', statusCode: '200', dataName: 'notifications', action: 'list', method: 'GET', userId: ada.id, rowCount: 1 });
      const [welcome] = res.body.notifications as InboxItem[];
      expect(welcome).toEqual({
        id: welcomeId,
        template: 'welcome',
        subject: 'Welcome, Ada Lovelace',
        body: expect.stringMatching(/^Your account in .+ is ready\.$/),
        createdAt: expect.any(String),
        readAt: null,
        isRead: false,
      });
    });

    it('newest first, with the envelope and its paging', async () => {
      const res = await get(LIST, ada).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', dataName: 'notifications', action: 'list', rowCount: 4 });
      expect(res.body.paging).toEqual({ pageNumber: 1, pageRowCount: 20, totalRowCount: 4, pageCount: 1 });
      const items = res.body.notifications as InboxItem[];
      expect(items.map((n) => n.id)).toEqual([...sent].reverse().concat(welcomeId));
      const times = items.map((n) => Date.parse(n.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('pages by pageRowCount', async () => {
      const first = await get(`${LIST}?pageRowCount=3`, ada).expect(200);
      expect(first.body.paging).toEqual({ pageNumber: 1, pageRowCount: 3, totalRowCount: 4, pageCount: 2 });
      expect(first.body.rowCount).toBe(3);
      const second = await get(`${LIST}?pageRowCount=3&pageNumber=2`, ada).expect(200);
      expect(second.body.paging).toEqual({ pageNumber: 2, pageRowCount: 3, totalRowCount: 4, pageCount: 2 });
      expect((second.body.notifications as InboxItem[]).map((n) => n.id)).toEqual([welcomeId]);
      const ids = [...first.body.notifications, ...second.body.notifications].map((n: InboxItem) => n.id);
      expect(new Set(ids).size).toBe(4);
      const past = await get(`${LIST}?pageRowCount=3&pageNumber=3`, ada).expect(200);
      expect(past.body).toMatchObject({ rowCount: 0, notifications: [] });
    });

    it('a bad page query: 400', async () => {
      await get(`${LIST}?pageNumber=0`, ada).expect(400);
      await get(`${LIST}?pageRowCount=abc`, ada).expect(400);
    });
  });

  describe('reading', () => {
    let grace: Member;
    let ids: string[];
    beforeAll(async () => {
      grace = await member(storeA, 'Grace Hopper');
      await inboxOf(grace, 1);
      await sendInApp(grace);
      await sendInApp(grace);
      ids = (await inboxOf(grace, 3)).map((n) => n.id);
    });

    it('POST /notifications/:id/read → 200, read; /unread lists only the unread ones', async () => {
      const res = await post(read(ids[1]), grace).expect(200);
      expect(res.body).toMatchObject({ status: 'OK', dataName: 'notification', action: 'update', rowCount: 1 });
      expect(res.body.notification).toMatchObject({ id: ids[1], template: 'welcome', isRead: true, readAt: expect.any(String) });

      const unread = await get(UNREAD, grace).expect(200);
      expect(unread.body).toMatchObject({ dataName: 'notifications', action: 'list', rowCount: 2 });
      expect(unread.body.paging).toMatchObject({ totalRowCount: 2 });
      expect((unread.body.notifications as InboxItem[]).map((n) => n.id)).toEqual([ids[0], ids[2]]);
      expect((unread.body.notifications as InboxItem[]).every((n) => !n.isRead && n.readAt === null)).toBe(true);

      // the full list still has all three, the read one marked
      const all = (await get(LIST, grace).expect(200)).body.notifications as InboxItem[];
      expect(all.map((n) => [n.id, n.isRead])).toEqual([
        [ids[0], false],
        [ids[1], true],
        [ids[2], false],
      ]);
    });

    it('marking read again is fine: 200 with the same readAt', async () => {
      const first = await post(read(ids[2]), grace).expect(200);
      const again = await post(read(ids[2]), grace).expect(200);
      expect(again.body.notification).toMatchObject({ id: ids[2], isRead: true });
      expect(again.body.notification.readAt).toBe(first.body.notification.readAt);
    });

    it("another user's notification: 404, and it stays unread", async () => {
      const other = await member(storeA, 'Other');
      const [othersWelcome] = await inboxOf(other, 1);
      await post(read(othersWelcome.id), grace).expect(404);
      const [still] = (await get(LIST, other).expect(200)).body.notifications as InboxItem[];
      expect(still).toMatchObject({ id: othersWelcome.id, isRead: false, readAt: null });
    });

    it('an id that names no notification: 404; a malformed id: 400', async () => {
      await post(read(randomUUID()), grace).expect(404);
      await post(read('not-a-uuid'), grace).expect(400);
    });

    it('without a token: 401 on every route', async () => {
      await t.http.get(LIST).set(HEADER, storeA.codename).expect(401);
      await t.http.get(UNREAD).set(HEADER, storeA.codename).expect(401);
      await t.http.post(read(ids[0])).set(HEADER, storeA.codename).expect(401);
    });

    it('a store A token aimed at store B: 403 TenantMismatch', async () => {
      for (const res of [await get(LIST, grace, storeB), await get(UNREAD, grace, storeB), await post(read(ids[0]), grace, storeB)]) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ errCode: 'TenantMismatch' });
      }
    });
  });

  describe('isolation and escaping', () => {
    it("a user of store B never sees store A's notifications", async () => {
      const a = await member(storeA, 'In A');
      const b = await member(storeB, 'In B');
      const [aWelcome] = await inboxOf(a, 1);
      await sendInApp(a);
      const [bWelcome] = await inboxOf(b, 1);
      // a notification filed under store A for B's user is not B's (no such user in A)
      const service = t.app.get(NotificationService);
      await service.send({ channel: 'inApp', template: 'welcome', userId: b.id, storeId: storeA.storeId });
      await inboxOf(a, 2);

      const bList = await get(LIST, b).expect(200);
      expect((bList.body.notifications as InboxItem[]).map((n) => n.id)).toEqual([bWelcome.id]);
      const bUnread = await get(UNREAD, b).expect(200);
      expect((bUnread.body.notifications as InboxItem[]).map((n) => n.id)).toEqual([bWelcome.id]);
      await post(read(aWelcome.id), b).expect(404);
      const [aStill] = ((await get(LIST, a).expect(200)).body.notifications as InboxItem[]).slice(-1);
      expect(aStill).toMatchObject({ id: aWelcome.id, isRead: false });
    });

    it('variables are escaped in in-app text', async () => {
      const bold = await member(storeB, '<b>x</b>');
      const [welcome] = await inboxOf(bold, 1);
      expect(welcome.subject).toBe('Welcome, &lt;b&gt;x&lt;/b&gt;');
      expect(welcome.subject).not.toContain('<b>');
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from './helpers.js';

const HEADER = 'svc-store-codename';

// The shipped in-app welcome, in English and German: the store's language picks one.
const SETTINGS = {
  notifications: {
    defaultLanguage: 'en',
    providers: [],
    channels: [{ channelName: 'inApp' as const, providers: [], fallbackProviders: [] }],
    templates: [
      { templateName: 'welcome', channel: 'inApp' as const, language: 'en', subject: 'Welcome', body: 'Your account is ready.' },
      { templateName: 'welcome', channel: 'inApp' as const, language: 'de', subject: 'Willkommen', body: 'Ihr Konto ist bereit.' },
    ],
    eventRules: [{ eventName: 'user.created', template: 'welcome', channel: 'inApp' as const, recipient: 'event.userId', contextVars: {} }],
    worker: { concurrency: 5, maxAttempts: 5, backoffMs: 2000 },
  },
};

describe('language preferences', () => {
  let t: TestApp;
  let store: RegisteredStore;
  let owner: string;
  beforeAll(async () => {
    t = await startApp({ env: { SERVICE_CODENAME: unique('lang') }, settings: SETTINGS as never });
    store = await registerStore(t.http);
    owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
  });
  afterAll(() => t.close());

  const patchUser = (token: string, id: string, body: object) => t.http.patch(`/auth-api/v1/users/${id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).send(body);
  const patchStore = (token: string, body: object, codename = store.codename) => t.http.patch('/auth-api/v1/store').set(HEADER, codename).set('Authorization', `Bearer ${token}`).send(body);

  async function member(): Promise<{ id: string; email: string; token: string }> {
    const email = uniqueEmail();
    const res = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Member' }).expect(201);
    return { id: res.body.user.id, email, token: (await login(t.http, email, PASSWORD, store.codename)).accessToken };
  }

  describe('a user\'s own language (PATCH /v1/users/:id)', () => {
    it('is set in canonical BCP 47 form, shown, and cleared with null', async () => {
      const me = await member();
      const set = await patchUser(me.token, me.id, { language: 'pt-br' }).expect(200);
      expect(set.body.user.language).toBe('pt-BR');
      const read = await t.http.get(`/auth-api/v1/users/${me.id}`).set(HEADER, store.codename).set('Authorization', `Bearer ${me.token}`).expect(200);
      expect(read.body.user.language).toBe('pt-BR');
      expect((await patchUser(me.token, me.id, { language: null }).expect(200)).body.user).not.toHaveProperty('language');
    });

    it.each(['e', 'en--US', 'en_US', '', 'x'.repeat(40), 'en-US-u-ca-gregory-'])('refuses %j with 400 ValidationFailed', async (language) => {
      const me = await member();
      const res = await patchUser(me.token, me.id, { language });
      expectError(res, 400, 'ValidationFailed');
      expect(res.body.detail).toMatch(/language/);
    });
  });

  describe('the store\'s language (PATCH /v1/store)', () => {
    it('a store admin sets it, and new users get their notifications in it', async () => {
      const res = await patchStore(owner, { language: 'DE' }).expect(200);
      expect(res.body).toMatchObject({ dataName: 'store', action: 'update', store: { codename: store.codename, language: 'de' } });
      const me = await member();
      const inbox = await waitFor('the welcome notification', async () => {
        const r = await t.http.get('/notifications').set(HEADER, store.codename).set('Authorization', `Bearer ${me.token}`).expect(200);
        return r.body.notifications.length ? r.body.notifications : undefined;
      });
      expect(inbox[0]).toMatchObject({ subject: 'Willkommen' });
      await patchStore(owner, { language: null }).expect(200);
    });

    it('is refused to a plain user of the store, and to another store\'s owner', async () => {
      const me = await member();
      expectError(await patchStore(me.token, { language: 'fr' }), 403, 'Forbidden');
      const other = await registerStore(t.http);
      const otherOwner = (await login(t.http, other.ownerEmail, PASSWORD, other.codename)).accessToken;
      expectError(await patchStore(otherOwner, { language: 'fr' }), 403, 'TenantMismatch');
    });

    it('refuses an invalid tag and unknown fields', async () => {
      expectError(await patchStore(owner, { language: 'français' }), 400, 'ValidationFailed');
      expectError(await patchStore(owner, { codename: 'renamed' }), 400, 'UnknownField');
    });
  });
});

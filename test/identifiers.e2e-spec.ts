import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import type { SettingsOverrides } from '../src/settings.js';
import { PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp, expectError as expectErrorShape } from './helpers.js';

// The spec's login-identifier rules, seen through POST /v1/registerstoreuser into a fresh store.
// Mobile uniqueness is per store, so fixed numbers are safe in fresh stores.

const OWNER = '/auth-api/v1/registerstoreowner';
const USER = '/auth-api/v1/registerstoreuser';
const HEADER = 'svc-store-codename';
const MOBILE = '+14155552671';
const OTHER_MOBILE = '+442071838750';

interface Ctx {
  t: TestApp;
  store: () => Promise<RegisteredStore>;
  register: (store: RegisteredStore, body: Record<string, unknown>) => ReturnType<TestApp['http']['post']>;
}

// One app per settings combination; `owner` is what the store owner needs to register under it.
function withSettings(settings: SettingsOverrides, owner: Record<string, unknown>): Ctx {
  const ctx = {} as Ctx;
  beforeAll(async () => {
    ctx.t = await startApp({ settings });
    ctx.store = () => registerStore(ctx.t.http, owner);
    ctx.register = (store, body) => ctx.t.http.post(USER).set(HEADER, store.codename).send({ password: PASSWORD, fullname: 'Identified', ...body });
  });
  afterAll(() => ctx.t.close());
  return ctx;
}

async function storedRow(t: TestApp, id: string): Promise<{ email: string | null; mobile: string | null }> {
  const [row] = await t.app.get(DataSource).query('SELECT "email", "mobile" FROM "users" WHERE "id" = $1', [id]);
  return row;
}

function expectError(res: { status: number; body: Record<string, unknown> }, status: number, errCode: string, names?: RegExp): void {
  expectErrorShape(res, status, errCode);
  if (names) expect(res.body.detail).toMatch(names);
}

describe('(a) email primary, secondary none (defaults)', () => {
  const c = withSettings({}, {});

  it('accepts an email and has no mobile fields', async () => {
    const store = await c.store();
    const res = await c.register(store, { email: uniqueEmail() }).expect(201);
    expect(res.body.user).toMatchObject({ emailVerified: false });
    expect('mobile' in res.body.user).toBe(false);
    expect('mobileVerified' in res.body.user).toBe(false);
  });

  it('refuses a mobile: 400 IdentifierNotAccepted naming mobile', async () => {
    const store = await c.store();
    const res = await c.register(store, { email: uniqueEmail(), mobile: MOBILE });
    expectError(res, 400, 'IdentifierNotAccepted', /mobile/);
  });

  it('requires the email: 400 IdentifierRequired naming email', async () => {
    const store = await c.store();
    expectError(await c.register(store, {}), 400, 'IdentifierRequired', /email/);
    // a mobile does not stand in for the email (which of the two problems is named first is open)
    const mobileOnly = await c.register(store, { mobile: MOBILE });
    expect(mobileOnly.status).toBe(400);
    expect(['IdentifierRequired', 'IdentifierNotAccepted']).toContain(mobileOnly.body.errCode);
  });

  it('requires the email of a store owner too, and creates no store without it', async () => {
    const name = unique('No Email ');
    const res = await c.t.http.post(OWNER).send({ password: PASSWORD, fullname: 'O', store: { name } });
    expectError(res, 400, 'IdentifierRequired', /email/);
    expect(await c.t.app.get(DataSource).query('SELECT "id" FROM "stores" WHERE "name" = $1', [name])).toEqual([]);
  });
});

describe('(b) email primary, secondary optional', () => {
  const c = withSettings({ secondaryIdentifierPresence: 'optional' }, {});

  it('accepts a mobile and stores it in E.164', async () => {
    const store = await c.store();
    const res = await c.register(store, { email: uniqueEmail(), mobile: '+1 (415) 555-2671' }).expect(201);
    expect(res.body.user).toMatchObject({ mobile: '+14155552671', mobileVerified: false, emailVerified: false });
    expect((await storedRow(c.t, res.body.user.id)).mobile).toBe('+14155552671');
  });

  it.each([['+44 20 7183 8750', '+442071838750'], ['+33 6 12 34 56 78', '+33612345678'], ['+49-30-901820', '+4930901820']])(
    'normalizes %s to %s',
    async (sent, e164) => {
      const store = await c.store();
      const res = await c.register(store, { email: uniqueEmail(), mobile: sent }).expect(201);
      expect(res.body.user.mobile).toBe(e164);
    },
  );

  it('lets the mobile be left out', async () => {
    const store = await c.store();
    const res = await c.register(store, { email: uniqueEmail() }).expect(201);
    expect(res.body.user.mobile ?? null).toBeNull();
    expect((await storedRow(c.t, res.body.user.id)).mobile).toBeNull();
  });

  it('still requires the email', async () => {
    const store = await c.store();
    expectError(await c.register(store, { mobile: MOBILE }), 400, 'IdentifierRequired', /email/);
  });

  it.each(['+1 555', 'not-a-phone', '4155552671', '+999 1234 5678', '+1 415 555 2671 ext. 4', '+1 415 555 2671 0000'])(
    'refuses %p: 400 InvalidMobile naming mobile',
    async (mobile) => {
      const store = await c.store();
      expectError(await c.register(store, { email: uniqueEmail(), mobile }), 400, 'InvalidMobile', /mobile/);
    },
  );

  it('refuses a mobile that is not a string, naming mobile', async () => {
    const store = await c.store();
    expectError(await c.register(store, { email: uniqueEmail(), mobile: 14155552671 }), 400, 'ValidationFailed', /mobile/);
  });

  it('treats one mobile written in two formats as the same: 409 DuplicateIdentifier', async () => {
    const store = await c.store();
    await c.register(store, { email: uniqueEmail(), mobile: '+1 415-555-2671' }).expect(201);
    const res = await c.register(store, { email: uniqueEmail(), mobile: '+1 (415) 555 2671' });
    expectError(res, 409, 'DuplicateIdentifier', /mobile/);
    const rows = await c.t.app.get(DataSource).query('SELECT "mobile" FROM "users" WHERE "storeId" = $1 AND "mobile" IS NOT NULL', [store.storeId]);
    expect(rows).toEqual([{ mobile: '+14155552671' }]);
  });
});

describe('(c) email primary, secondary required', () => {
  const c = withSettings({ secondaryIdentifierPresence: 'required' }, { mobile: OTHER_MOBILE });

  it('requires the mobile: 400 IdentifierRequired naming mobile', async () => {
    const store = await c.store();
    expectError(await c.register(store, { email: uniqueEmail() }), 400, 'IdentifierRequired', /mobile/);
  });

  it('accepts email and mobile together', async () => {
    const store = await c.store();
    const email = uniqueEmail();
    const res = await c.register(store, { email, mobile: MOBILE }).expect(201);
    expect(res.body.user).toMatchObject({ email, emailVerified: false, mobile: MOBILE, mobileVerified: false });
    expect(await storedRow(c.t, res.body.user.id)).toEqual({ email, mobile: MOBILE });
  });

  it('requires the mobile of a store owner too', async () => {
    const res = await c.t.http.post(OWNER).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'O', store: { name: unique('Needs Mobile ') } });
    expectError(res, 400, 'IdentifierRequired', /mobile/);
  });
});

describe('(d) mobile primary, secondary none', () => {
  const c = withSettings({ primaryLoginIdentifier: 'mobile' }, { email: undefined, mobile: OTHER_MOBILE });

  it('accepts a mobile; the user has mobile fields and no email fields', async () => {
    const store = await c.store();
    const res = await c.register(store, { mobile: '+1 415 555 2671' }).expect(201);
    expect(res.body.user).toMatchObject({ mobile: MOBILE, mobileVerified: false, roleId: 'tenantUser', storeId: store.storeId });
    expect('email' in res.body.user).toBe(false);
    expect('emailVerified' in res.body.user).toBe(false);
    expect(await storedRow(c.t, res.body.user.id)).toEqual({ email: null, mobile: MOBILE });
  });

  it('refuses an email: 400 IdentifierNotAccepted naming email', async () => {
    const store = await c.store();
    expectError(await c.register(store, { mobile: MOBILE, email: uniqueEmail() }), 400, 'IdentifierNotAccepted', /email/);
  });

  it('requires the mobile: 400 IdentifierRequired naming mobile', async () => {
    const store = await c.store();
    expectError(await c.register(store, {}), 400, 'IdentifierRequired', /mobile/);
  });

  it('refuses the same mobile twice in one store', async () => {
    const store = await c.store();
    await c.register(store, { mobile: MOBILE }).expect(201);
    expectError(await c.register(store, { mobile: '+1-415-555-2671' }), 409, 'DuplicateIdentifier', /mobile/);
    // the owner's own number is taken in its store
    expectError(await c.register(store, { mobile: OTHER_MOBILE }), 409, 'DuplicateIdentifier', /mobile/);
  });

  it('registers the store owner by mobile, without email fields', async () => {
    const res = await c.t.http
      .post(OWNER)
      .send({ mobile: '+44 20 7183 8750', password: PASSWORD, fullname: 'O', store: { name: unique('Mobile Store ') } })
      .expect(201);
    expect(res.body.user).toMatchObject({ mobile: '+442071838750', mobileVerified: false, roleId: 'tenantOwner' });
    expect('email' in res.body.user).toBe(false);
  });
});

describe('(e) emailOrMobile, atLeastOne', () => {
  const c = withSettings({ primaryLoginIdentifier: 'emailOrMobile', dualIdentifierRegistration: 'atLeastOne' }, {});

  it('accepts only an email', async () => {
    const store = await c.store();
    const email = uniqueEmail();
    const res = await c.register(store, { email }).expect(201);
    expect(res.body.user).toMatchObject({ email, emailVerified: false });
    expect(await storedRow(c.t, res.body.user.id)).toEqual({ email, mobile: null });
  });

  it('accepts only a mobile', async () => {
    const store = await c.store();
    const res = await c.register(store, { mobile: '+1 (415) 555-2671' }).expect(201);
    expect(res.body.user).toMatchObject({ mobile: MOBILE, mobileVerified: false });
    expect(await storedRow(c.t, res.body.user.id)).toEqual({ email: null, mobile: MOBILE });
  });

  it('accepts both', async () => {
    const store = await c.store();
    const email = uniqueEmail();
    const res = await c.register(store, { email, mobile: MOBILE }).expect(201);
    expect(res.body.user).toMatchObject({ email, mobile: MOBILE });
  });

  it('refuses neither: 400 IdentifierRequired', async () => {
    const store = await c.store();
    expectError(await c.register(store, {}), 400, 'IdentifierRequired', /email or mobile/);
  });

  it('keeps both identifiers unique in the store', async () => {
    const store = await c.store();
    const email = uniqueEmail();
    await c.register(store, { email }).expect(201);
    await c.register(store, { mobile: MOBILE }).expect(201);
    expectError(await c.register(store, { email: email.toUpperCase() }), 409, 'DuplicateIdentifier', /email/);
    expectError(await c.register(store, { mobile: '+1 415 555 2671' }), 409, 'DuplicateIdentifier', /mobile/);
  });
});

describe('(f) emailOrMobile, both', () => {
  const c = withSettings({ primaryLoginIdentifier: 'emailOrMobile', dualIdentifierRegistration: 'both' }, { mobile: OTHER_MOBILE });

  it('accepts email and mobile together', async () => {
    const store = await c.store();
    const email = uniqueEmail();
    const res = await c.register(store, { email, mobile: MOBILE }).expect(201);
    expect(res.body.user).toMatchObject({ email, emailVerified: false, mobile: MOBILE, mobileVerified: false });
  });

  it('refuses a missing mobile: 400 IdentifierRequired naming mobile', async () => {
    const store = await c.store();
    expectError(await c.register(store, { email: uniqueEmail() }), 400, 'IdentifierRequired', /mobile/);
  });

  it('refuses a missing email: 400 IdentifierRequired naming email', async () => {
    const store = await c.store();
    expectError(await c.register(store, { mobile: MOBILE }), 400, 'IdentifierRequired', /email/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Secret, TOTP } from 'otpauth';
import type { SecureStoreLike } from '@svc/client';
import { PASSWORD, registerStore, startApp, unique, type TestApp } from '../../../test/helpers.js';
import { mobileClient, resume, signIn, submitCode } from '../src/session.js';

// The mobile example's integration under Node (no DOM, as in React Native), its session in a
// secure store that, like Expo's, is asynchronous and takes keys of [A-Za-z0-9._-] only.
function secureStoreDouble(): SecureStoreLike & { keys(): string[] } {
  const items = new Map<string, string>();
  const check = (key: string) => {
    if (!/^[A-Za-z0-9._-]+$/.test(key)) throw new Error(`Invalid key provided to SecureStore: ${key}`);
  };
  return {
    getItemAsync: async (key) => (check(key), items.get(key) ?? null),
    setItemAsync: async (key, value) => void (check(key), items.set(key, value)),
    deleteItemAsync: async (key) => void (check(key), items.delete(key)),
    keys: () => [...items.keys()],
  };
}

let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startApp({ env: { SERVICE_CODENAME: unique('mob') }, settings: { accessTokenMinutes: 5 } });
  await t.app.listen(0, '127.0.0.1');
  baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
});

afterAll(async () => {
  await t?.close();
});

describe('the mobile example', () => {
  it('signs in with a password and an authenticator code, keeps the session across a restart, signs out', async () => {
    const store = await registerStore(t.http);
    const device = secureStoreDouble();
    const app = mobileClient({ baseUrl, store: store.codename }, device);
    expect(await signIn(app, store.ownerEmail, 'wrong password')).toMatchObject({ screen: 'error' });
    expect(await signIn(app, store.ownerEmail, PASSWORD)).toEqual({ screen: 'home', email: store.ownerEmail });

    // The owner turns on an authenticator app.
    const setup = await app.call<{ secret: string }>('POST', '/auth-api/mfa/totp/setup', {});
    const secret = Secret.fromBase32(setup.secret);
    const now = Date.now();
    await app.call('POST', '/auth-api/mfa/totp/confirm', { code: TOTP.generate({ secret, timestamp: now }) });
    await app.signOut();
    expect(device.keys()).toEqual([]);

    expect(await signIn(app, store.ownerEmail, PASSWORD)).toEqual({ screen: 'code', factors: ['totp', 'recoveryCode'] });
    expect(await submitCode(app, 'totp', TOTP.generate({ secret, timestamp: now + 30_000 }))).toEqual({ screen: 'home', email: store.ownerEmail });
    expect(device.keys()).toEqual(['svc.session']);

    // The app is closed and opened again: the session comes back from the secure store.
    const reopened = mobileClient({ baseUrl, store: store.codename }, device);
    expect(await resume(reopened)).toEqual({ screen: 'home', email: store.ownerEmail });
    await reopened.signOut();
    expect(await resume(mobileClient({ baseUrl, store: store.codename }, device))).toBeUndefined();
  });
});

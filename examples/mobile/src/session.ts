// The app's whole integration with the service: a client whose session lives in the device's
// secure store (Keychain / Keystore through Expo's SecureStore), and the sign-in steps the screens
// walk through. No DOM, no EventSource: the same code runs under Node in the example's test.
import { createClient, secureStorage, type SecureStoreLike, type ServiceClient, type SignInResult } from '@svc/client';

export interface MobileConfig {
  baseUrl: string;
  store: string;
}

export function mobileClient(config: MobileConfig, secureStore: SecureStoreLike): ServiceClient {
  // Socket.IO over WebSocket for live events (React Native has WebSocket, not EventSource).
  return createClient({ baseUrl: config.baseUrl, store: config.store, storage: secureStorage(secureStore) });
}

// What the sign-in screen shows next.
export type Screen = { screen: 'home'; email: string | null } | { screen: 'code'; factors: string[] } | { screen: 'enrol' } | { screen: 'error'; message: string };

export function screenOf(result: SignInResult): Screen {
  if (result.status === 'signedIn') return { screen: 'home', email: result.session.email };
  if (result.status === 'secondFactor') return { screen: 'code', factors: result.factors };
  return { screen: 'enrol' };
}

export async function signIn(client: ServiceClient, username: string, password: string): Promise<Screen> {
  try {
    return screenOf(await client.signIn({ username, password }));
  } catch (error) {
    return { screen: 'error', message: (error as Error).message };
  }
}

// The code screen: an authenticator-app code, or a code sent by email or SMS.
export async function submitCode(client: ServiceClient, factor: 'totp' | 'recoveryCode' | 'email' | 'sms', code: string): Promise<Screen> {
  try {
    return screenOf(await client.secondFactor[factor](code));
  } catch (error) {
    return { screen: 'error', message: (error as Error).message };
  }
}

// At start: the screen of the session kept in the secure store, if the service still honours it.
export async function resume(client: ServiceClient): Promise<Screen | undefined> {
  const user = await client.currentUser();
  return user ? { screen: 'home', email: user.email } : undefined;
}

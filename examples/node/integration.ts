// A backend job or CLI on @svc/client: sign up a store, sign in, call typed routes, follow live
// events, refresh the token, sign out. Run against a running service:
//   SVC_BASE_URL=http://localhost:3000 node integration.js   (after compiling this file)
import { createClient, memoryStorage, type EventPacket } from '@svc/client';

export async function integration(baseUrl: string, log: (line: string) => void = console.log): Promise<{ events: EventPacket<'userCreated'>[]; refreshed: boolean; signedOut: boolean }> {
  const email = `owner-${Date.now()}@example.com`;
  const password = 'correct horse battery';
  const { store } = await createClient({ baseUrl }).signUp.owner({ email, password, fullname: 'Owner', store: { name: `Shop ${Date.now()}` } });
  const client = createClient({ baseUrl, store: store.codename, storage: memoryStorage() });

  const signIn = await client.signIn({ username: email, password });
  if (signIn.status !== 'signedIn') throw new Error(`sign-in needs ${signIn.status}`);
  log(`signed in to ${store.codename} as ${(await client.currentUser())?.email}`);

  const events: EventPacket<'userCreated'>[] = [];
  let close = () => {};
  await new Promise<void>((resolve, reject) => {
    close = client.events.subscribe('live-sse', { transport: 'sse', topics: ['userCreated'], onEvent: (e) => events.push(e), onSubscribed: () => resolve(), onError: (e) => reject(new Error(e.errCode)) }).close;
  });

  const { data: key } = await client.api.POST('/auth-api/v1/apikeys', { body: { name: 'reports' } });
  log(`API key ${key?.apiKey.id} created`);
  await client.signUp.user({ email: `user-${Date.now()}@example.com`, password, fullname: 'New User' });

  const before = await client.session();
  const refreshed = (await client.refresh())?.accessToken !== before?.accessToken;
  const { data } = await client.api.GET('/auth-api/v1/users', { params: { query: { pageRowCount: 10 } } });
  log(`${data?.users.length} users, token refreshed: ${refreshed}`);

  for (let i = 0; i < 50 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  close();
  await client.signOut();
  return { events, refreshed, signedOut: (await client.currentUser()) === null };
}

if (process.argv[1]?.endsWith('integration.js')) await integration(process.env.SVC_BASE_URL ?? 'http://localhost:3000');

import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';
import Provider from 'oidc-provider';

// Real protocol peers on loopback for social login and single sign-on tests.

// oidc-provider reminds at length that it runs with development keys and storage, which is
// what a test wants: those reminders are dropped, everything else still prints.
for (const level of ['info', 'warn'] as const) {
  const original = console[level].bind(console);
  console[level] = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider ')) return;
    original(...args);
  };
}

export interface OidcPeer {
  issuer: string;
  // The account the next login at the provider picks (its interaction page signs it in).
  nextAccount: string;
  // The login page refuses the next sign-in with this error instead (once), as a provider does
  // when the person declines or a policy of its own stops the sign-in.
  refuseNext?: { error: string; error_description?: string };
  accounts: Record<string, Record<string, unknown>>;
  // Starts answering, for these clients (known only once the service listens).
  serve(clients: { client_id: string; client_secret: string; redirect_uris: string[] }[]): void;
  close(): Promise<void>;
}

// A certified OpenID provider (oidc-provider) whose login page signs in `nextAccount` at once
// and whose clients need no consent screen.
export async function startOidcProvider(): Promise<OidcPeer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const peer: OidcPeer = { issuer, nextAccount: 'alice', accounts: {}, serve: (clients) => serve(server, peer, clients), close: () => closeServer(server) };
  return peer;
}

function serve(server: Server, peer: OidcPeer, clients: { client_id: string; client_secret: string; redirect_uris: string[] }[]): void {
  const provider = new Provider(peer.issuer, {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post' })),
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, ...peer.accounts[id] }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'picture', 'employee_id', 'upn'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // First-party clients: the grant exists without a consent screen.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    cookies: { keys: ['test-cookie-key'] },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      const result = peer.refuseNext ?? { login: { accountId: peer.nextAccount } };
      peer.refuseNext = undefined;
      provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false }).catch((e: Error) => {
        res.statusCode = 500;
        res.end(e.message);
      });
      return;
    }
    callback(req, res);
  });
}

export interface OAuthPeer {
  url: string;
  // The provider's profile answer for the next login.
  profile: Record<string, unknown>;
  // Claims added to the tokens it signs (the ID token of a sign-in).
  claims: Record<string, unknown>;
  close(): Promise<void>;
}

// A plain OAuth 2 authorization server (oauth2-mock-server) answering `profile` at /userinfo.
export async function startOAuthServer(): Promise<OAuthPeer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const peer: OAuthPeer = { url: server.issuer.url!, profile: {}, claims: {}, close: () => server.stop() };
  server.service.on('beforeUserinfo', (response: { body: unknown }) => {
    response.body = peer.profile;
  });
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    Object.assign(token.payload, peer.claims);
  });
  // Apple asks for `code id_token`, which this server does not issue: answer with a code, as
  // Apple does (its ID token then comes from the token endpoint).
  server.service.on('beforeAuthorizeRedirect', (redirect: { url: URL }, req: { url?: string }) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    if (query.get('response_type') !== 'code id_token') return;
    redirect.url.searchParams.delete('error');
    redirect.url.searchParams.delete('error_description');
    redirect.url.searchParams.set('code', randomUUID());
  });
  return peer;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

// A browser, as far as redirects and cookies go: follows redirects from `start` until one
// points under `stopAt` (the client application, which is not running) and returns that address.
export async function followRedirects(start: string, stopAt: string, headers: Record<string, string> = {}): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return new URL(url);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: { ...(hop === 0 && headers), ...(cookie && { cookie }) } });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i).trim(), pair.slice(i + 1));
    }
    const location = res.headers.get('location');
    if (!location || res.status < 300 || res.status >= 400) throw new Error(`${url} answered ${res.status} without a redirect: ${await res.text()}`);
    url = new URL(location, url).toString();
  }
  throw new Error('too many redirects');
}

export interface RemoteSessionPeer {
  url: string;
  issuer: string;
  // Live sessions by id: what the session endpoint answers under `data.session`.
  sessions: Map<string, Record<string, unknown>>;
  // Requests the session endpoint received (method, path, body, headers).
  requests: { method: string; path: string; body: string; headers: Record<string, string | string[] | undefined> }[];
  // How the endpoints behave: answer, fail with a status, or hang past any timeout.
  sessionMode: 'answer' | 500 | 'hang';
  jwksMode: 'answer' | 500;
  // A token of the remote service for session `sid` (claims may be overridden or added).
  sign(sid: string, claims?: Record<string, unknown>, key?: 'own' | 'stranger'): Promise<string>;
  close(): Promise<void>;
}

// The service's remoteSession settings pointed at `peer`, trusted by `stores`.
export function remoteSessionSettings(peer: RemoteSessionPeer, stores: string[]) {
  return {
    enabled: true,
    issuer: peer.issuer,
    audience: 'identity-service',
    jwksUrl: `${peer.url}/jwks.json`,
    sessionIdPath: 'sid',
    requestUrl: `${peer.url}/sessions/{sessionId}`,
    method: 'GET' as const,
    sessionLocation: 'data.session',
    emailPath: 'user.email',
    stores,
    timeoutMs: 500,
    cacheSeconds: 5,
  };
}

// A remote service that issues its own session tokens (ES256, published as a JWKS) and answers
// `GET /sessions/{id}` and `POST /sessions/lookup` with `{ data: { session } }`, 404 when unknown.
export async function startRemoteSessionService(): Promise<RemoteSessionPeer> {
  const own = await generateKeyPair('ES256');
  const stranger = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(own.publicKey)), kid: 'remote-1', alg: 'ES256', use: 'sig' };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const peer: RemoteSessionPeer = {
    url,
    issuer: `${url}/`,
    sessions: new Map(),
    requests: [],
    sessionMode: 'answer',
    jwksMode: 'answer',
    sign: (sid, claims = {}, key = 'own') => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ sid, iss: peer.issuer, aud: 'identity-service', iat: now, exp: now + 3600, ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'remote-1' })
        .sign(key === 'own' ? own.privateKey : stranger.privateKey);
    },
    close: () => closeServer(server),
  };
  server.on('request', (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (path === '/jwks.json') return peer.jwksMode === 'answer' ? json(200, { keys: [jwk] }) : json(500, { error: 'down' });
      peer.requests.push({ method: req.method ?? '', path, body, headers: req.headers });
      if (peer.sessionMode === 'hang') return; // never answers; closeServer drops it
      if (peer.sessionMode !== 'answer') return json(peer.sessionMode, { error: 'down' });
      const id = req.method === 'POST' && path === '/sessions/lookup' ? (JSON.parse(body || '{}') as { sessionId?: string }).sessionId : decodeURIComponent(path.replace(/^\/sessions\//, ''));
      const session = id === undefined ? undefined : peer.sessions.get(id);
      return session ? json(200, { data: { session } }) : json(404, { error: 'no such session' });
    });
  });
  return peer;
}

export interface Relay {
  url: string;
  // Where it forwards to (known once the service listens).
  target: string;
  close(): Promise<void>;
}

// A reverse proxy on its own loopback port, as deployed under a path prefix: it forwards what
// arrives under `prefix` to `target` without the prefix, with the target's Host (as nginx does
// by default), so the service sees neither the public host nor the prefix.
export async function startPrefixRelay(prefix: string): Promise<Relay> {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const upstream = new URL(relay.target);
    if (!url.startsWith(`${prefix}/`)) {
      res.writeHead(404).end('outside the relayed prefix');
      return;
    }
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: url.slice(prefix.length), headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', (e) => res.writeHead(502).end(e.message));
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relay: Relay = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, target: '', close: () => closeServer(server) };
  return relay;
}

export interface DiscoveryPeer {
  url: string;
  // The `issuer` the discovery document names; the peer's own address unless changed.
  issuer: string;
  close(): Promise<void>;
}

// An OpenID provider that only publishes its discovery document, naming `issuer` (set it to
// another spelling of the address to make the document unusable).
export async function startDiscoveryPeer(): Promise<DiscoveryPeer> {
  const server = createServer((req, res) => {
    if (req.url !== '/.well-known/openid-configuration') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ issuer: peer.issuer, authorization_endpoint: `${peer.issuer}/auth`, token_endpoint: `${peer.issuer}/token`, jwks_uri: `${peer.issuer}/jwks`, response_types_supported: ['code'] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const peer: DiscoveryPeer = { url, issuer: url, close: () => closeServer(server) };
  return peer;
}

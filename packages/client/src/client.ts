import createFetchClient, { type Client as FetchClient } from 'openapi-fetch';
import { ServiceError } from './errors.js';
import type { components, paths } from './generated/openapi.js';
import { SessionKeeper, type SessionListener } from './keeper.js';
import { EventChannel } from './events.js';
import type { SecondFactor, Session, SignInAnswer } from './session.js';
import { memoryStorage, type TokenStorage } from './storage.js';

type Schemas = components['schemas'];

export interface ClientOptions {
  // The service's address, e.g. https://id.example.com (no trailing path).
  baseUrl: string;
  // The store (tenant) codename every call targets; '' or absent: the root store.
  store?: string;
  // Where the session is kept: memoryStorage() (default), webStorage(), secureStorage(SecureStore).
  storage?: TokenStorage;
  // Cookie mode, for an SPA served on the service's own site: the browser keeps the tokens in the
  // service's httpOnly cookies and no script can read them; `storage` keeps the rest of the session.
  cookies?: boolean;
  fetch?: typeof fetch;
  // The service's PROJECT_CODENAME, which names the store header `<project>-store-codename`.
  project?: string;
  // Refresh this long before the access token expires (default 30 s).
  refreshAheadSeconds?: number;
  // The storage key of the session (default `svc.session`).
  storageKey?: string;
  // false: no Web Locks or BroadcastChannel, even where the environment has them.
  crossTab?: boolean;
}

// What a sign-in step answered: complete, or the next step.
export type SignInResult =
  | { status: 'signedIn'; session: Session }
  | { status: 'secondFactor'; factors: SecondFactor[]; session: Session }
  | { status: 'mfaEnrollment'; session: Session };

// No user of the store has this social account yet: `socialCode` registers one with it
// (`signUp.user({ ..., socialCode })`).
export type SocialResult = SignInResult | { status: 'registrationNeeded'; accountInfo: Record<string, unknown>; socialCode: string };

type Body = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Shared {
  options: Required<Pick<ClientOptions, 'baseUrl' | 'project'>> & ClientOptions;
  keeper: SessionKeeper;
  fetch: typeof fetch;
}

const resultOf = (session: Session): SignInResult =>
  session.pendingFactors.length ? { status: 'secondFactor', factors: session.pendingFactors, session } : session.mfaEnrollmentNeeded ? { status: 'mfaEnrollment', session } : { status: 'signedIn', session };

// A client of the service for one store. Calls carry the store and the session's token; a token
// about to expire, or refused with 401, is refreshed once for all concurrent calls, and the call
// sent again once.
export class ServiceClient {
  // Every route of the service, typed from its OpenAPI document (openapi-fetch).
  readonly api: FetchClient<paths>;
  readonly events: EventChannel;

  private constructor(
    private readonly shared: Shared,
    readonly store: string,
  ) {
    this.api = createFetchClient<paths>({ baseUrl: shared.options.baseUrl, fetch: (request: Request) => this.send(request) });
    this.events = new EventChannel({
      baseUrl: shared.options.baseUrl,
      store,
      storeHeader: this.storeHeader,
      fetch: shared.fetch,
      token: () => this.freshToken(),
      cookies: shared.options.cookies === true,
    });
  }

  static create(options: ClientOptions): ServiceClient {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    const cookies = options.cookies === true;
    const key = options.storageKey ?? 'svc.session';
    const g = globalThis as unknown as { navigator?: { locks?: { request<T>(name: string, cb: () => Promise<T>): Promise<T> } }; BroadcastChannel?: new (name: string) => { postMessage(m: unknown): void; addEventListener(t: 'message', l: (e: { data: unknown }) => void): void; close(): void } };
    const crossTab = options.crossTab !== false;
    const fetcher = options.fetch ?? ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args));
    const shared: Shared = { options: { ...options, baseUrl, project: options.project ?? 'svc' }, fetch: fetcher, keeper: undefined as unknown as SessionKeeper };
    const header = `${shared.options.project}-store-codename`;
    shared.keeper = new SessionKeeper({
      storage: options.storage ?? memoryStorage(),
      key,
      cookies,
      refreshAheadMs: (options.refreshAheadSeconds ?? 30) * 1000,
      locks: crossTab ? g.navigator?.locks : undefined,
      channel: crossTab && g.BroadcastChannel && g.navigator?.locks ? new g.BroadcastChannel(key) : undefined,
      refresh: async (session) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (session.store) headers[header] = session.store;
        let res: Response;
        try {
          res = await fetcher(`${baseUrl}/auth-api/refresh`, {
            method: 'POST',
            headers,
            body: JSON.stringify(cookies ? {} : { refreshToken: session.refreshToken }),
            ...(cookies && { credentials: 'include' as const }),
          });
        } catch (cause) {
          return { ok: false, error: new ServiceError({ errCode: 'NetworkError', status: 0, message: 'The service could not be reached', cause }) };
        }
        const body = await res.json().catch(() => undefined);
        return res.ok ? { ok: true, answer: body as SignInAnswer } : { ok: false, error: ServiceError.fromAnswer(res.status, body) };
      },
    });
    return new ServiceClient(shared, options.store ?? '');
  }

  // The same client (the same session) targeting another store: a SaaS administrator's calls.
  withStore(codename: string): ServiceClient {
    return new ServiceClient(this.shared, codename);
  }

  get storeHeader(): string {
    return `${this.shared.options.project}-store-codename`;
  }

  session(): Promise<Session | undefined> {
    return this.shared.keeper.session();
  }

  // The session as last read, without waiting (undefined also before the storage answered).
  peekSession(): Session | undefined {
    return this.shared.keeper.peek();
  }

  // The session a route this client does not wrap answered (e.g. POST /auth-api/mfa/totp/confirm
  // completing an enrolment the role required): taken as a completed step's answer.
  async adopt(answer: Schemas['SecondFactorDoneResponse']): Promise<SignInResult> {
    return this.completed(answer);
  }

  // Forgets the session here only (the service's session lives on until it ends or expires).
  forget(): Promise<void> {
    return this.shared.keeper.set(undefined, 'signedOut');
  }

  // A new access token now (new roles or claims, or ahead of a long task); the session as it then
  // is (undefined: the service ended it).
  refresh(): Promise<Session | undefined> {
    return this.shared.keeper.refresh();
  }

  onSessionChange(listener: SessionListener): () => void {
    return this.shared.keeper.onChange(listener);
  }

  // ---- sign-up and sign-in -------------------------------------------------------------------

  readonly signUp = {
    // A new store and its owner (where the service lets anyone register one).
    owner: (input: Schemas['RegisterStoreOwnerInput']) =>
      this.call<{ store: Schemas['StoreResponse']; user: Schemas['UserResponse'] }>('POST', '/auth-api/v1/registerstoreowner', input),
    // A user of this client's store.
    user: (input: Schemas['RegisterStoreUserInput']) => this.call<{ user: Schemas['UserResponse'] }>('POST', '/auth-api/v1/registerstoreuser', input),
  };

  async signIn(input: Schemas['LoginInput']): Promise<SignInResult> {
    return this.signedIn(await this.call<Schemas['LoginResponse']>('POST', '/auth-api/login', input, { anonymous: true }));
  }

  // The second factor of a pending sign-in.
  readonly secondFactor = {
    totp: async (code: string) => this.completed(await this.call<Schemas['SecondFactorDoneResponse']>('POST', '/auth-api/mfa/totp/verify', { code }, { own: true })),
    recoveryCode: async (code: string) => this.completed(await this.call<Schemas['SecondFactorDoneResponse']>('POST', '/auth-api/mfa/recovery', { code }, { own: true })),
    sendEmailCode: () => this.call<Schemas['StartAnswer']>('POST', '/auth-api/verification-services/email-2factor-verification/start', {}, { own: true }),
    email: async (secretCode: string) =>
      this.completed(await this.call<Schemas['SecondFactorDoneResponse']>('POST', '/auth-api/verification-services/email-2factor-verification/complete', { secretCode }, { own: true })),
    sendSmsCode: () => this.call<Schemas['StartAnswer']>('POST', '/auth-api/verification-services/mobile-2factor-verification/start', {}, { own: true }),
    sms: async (secretCode: string) =>
      this.completed(await this.call<Schemas['SecondFactorDoneResponse']>('POST', '/auth-api/verification-services/mobile-2factor-verification/complete', { secretCode }, { own: true })),
  };

  readonly passwordless = {
    start: (input: Schemas['PasswordlessStartInput']) => this.call<Schemas['PasswordlessStartAnswer']>('POST', '/auth-api/passwordless/start', input, { anonymous: true }),
    complete: async (input: Schemas['PasswordlessCompleteInput']) =>
      this.signedIn(await this.call<Schemas['LoginResponse']>('POST', '/auth-api/passwordless/complete', input, { anonymous: true })),
  };

  // Passkeys, in a browser (WebAuthn through @simplewebauthn/browser, loaded when first used).
  readonly passkey = {
    signIn: async (): Promise<SignInResult> => {
      const { startAuthentication } = await webauthn();
      const optionsJSON = await this.call<Record<string, unknown>>('POST', '/auth-api/passkeys/login/options', {}, { anonymous: true });
      const response = await startAuthentication({ optionsJSON: optionsJSON as never });
      return this.signedIn(await this.call<Schemas['LoginResponse']>('POST', '/auth-api/passkeys/login/verify', { response }, { anonymous: true }));
    },
    register: async (name?: string): Promise<Schemas['PasskeyEnrolledAnswer']> => {
      const { startRegistration } = await webauthn();
      const optionsJSON = await this.call<Record<string, unknown>>('POST', '/auth-api/passkeys/register/options', {}, { own: true });
      const response = await startRegistration({ optionsJSON: optionsJSON as never });
      const enrolled = await this.call<Schemas['PasskeyEnrolledAnswer']>('POST', '/auth-api/passkeys/register/verify', name === undefined ? { response } : { response, name }, { own: true });
      // An enrolment the user's role required completes the sign-in: the answer is the session.
      if (enrolled.session) await this.completed(enrolled.session);
      return enrolled;
    },
    // The second factor of a pending sign-in.
    secondFactor: async (): Promise<SignInResult> => {
      const { startAuthentication } = await webauthn();
      const optionsJSON = await this.call<Record<string, unknown>>('POST', '/auth-api/passkeys/2fa/options', {}, { own: true });
      const response = await startAuthentication({ optionsJSON: optionsJSON as never });
      return this.completed(await this.call<Schemas['SecondFactorDoneResponse']>('POST', '/auth-api/passkeys/2fa/verify', { response }, { own: true }));
    },
  };

  // Social sign-in and single sign-on leave the page: `url` is where to send the browser (with
  // `redirectUrl`, one of the addresses the store allows, where it comes back with `socialCode`),
  // `redirect` sends it there, and `completeSocialCode` turns the code into the session.
  readonly social = {
    url: (provider: string, options: { redirectUrl?: string } = {}) => this.pageUrl(`/auth-api/auth/${encodeURIComponent(provider)}`, options.redirectUrl),
    redirect: (provider: string, options: { redirectUrl?: string } = {}) => navigate(this.social.url(provider, options)),
  };

  readonly sso = {
    url: (options: { redirectUrl?: string } = {}) => this.pageUrl('/auth-api/sso/login', options.redirectUrl),
    redirect: (options: { redirectUrl?: string } = {}) => navigate(this.sso.url(options)),
  };

  async completeSocialCode(socialCode: string): Promise<SocialResult> {
    const answer = await this.call<Schemas['SocialLoginResultResponse']>('POST', '/auth-api/auth/social-login-result', { socialCode }, { anonymous: true });
    if (answer.type === 'RegisterNeededForSocialLogin') return { status: 'registrationNeeded', accountInfo: answer.accountInfo ?? {}, socialCode: answer.socialCode ?? '' };
    return this.signedIn(answer);
  }

  // Ends the session at the service (its tokens die for every replica), then here, whatever the
  // service answered.
  async signOut(): Promise<void> {
    const session = await this.session();
    if (!session) return;
    try {
      await this.call('POST', '/auth-api/logout', !this.shared.options.cookies && session.refreshToken ? { refreshToken: session.refreshToken } : {}, { own: true, noRefresh: true });
    } catch {
      // signed out here regardless
    }
    await this.shared.keeper.set(undefined, 'signedOut');
  }

  // The signed-in user as the service sees it now (null: no session, or the service ended it).
  async currentUser(): Promise<(Schemas['SessionResponse'] & { roles: string[] }) | null> {
    const session = await this.session();
    if (!session && !this.shared.options.cookies) return null;
    try {
      const user = await this.call<Schemas['SessionResponse']>('GET', '/auth-api/currentuser', undefined, { own: true });
      const { accessToken: _token, ...rest } = user;
      return { ...rest, roles: (Array.isArray(user.roleId) ? user.roleId : [user.roleId]).map(String) };
    } catch (error) {
      if (error instanceof ServiceError && error.status === 401) return null;
      throw error;
    }
  }

  readonly sessions = {
    list: (query: { pageNumber?: number; pageRowCount?: number } = {}) => this.call<Schemas['SessionListResponse']>('GET', '/auth-api/sessions' + queryString(query), undefined, { own: true }),
    end: (id: string) => this.call<unknown>('DELETE', `/auth-api/sessions/${encodeURIComponent(id)}`, undefined, { own: true }),
    endOthers: () => this.call<unknown>('DELETE', '/auth-api/sessions', undefined, { own: true }),
  };

  // Password reset by a code or link sent by email or SMS.
  readonly passwordReset = {
    start: (input: { email: string; frontendUrl?: string } | { mobile: string; frontendUrl?: string }) =>
      this.call<Schemas['StartAnswer']>('POST', `/auth-api/verification-services/password-reset-by-${'email' in input ? 'email' : 'mobile'}/start`, input, { anonymous: true }),
    complete: (input: ({ email: string } | { mobile: string }) & { secretCode: string; password: string }) =>
      this.call<Schemas['CompleteAnswer']>('POST', `/auth-api/verification-services/password-reset-by-${'email' in input ? 'email' : 'mobile'}/complete`, input, { anonymous: true }),
  };

  // Verification of the user's email address or mobile number.
  readonly verification = {
    start: (channel: 'email' | 'mobile', input: Schemas['StartVerificationInput'] = {}) =>
      this.call<Schemas['StartAnswer']>('POST', `/auth-api/verification-services/${channel}-verification/start`, input),
    complete: (channel: 'email' | 'mobile', input: Schemas['CompleteVerificationInput']) =>
      this.call<Schemas['CompleteAnswer']>('POST', `/auth-api/verification-services/${channel}-verification/complete`, input),
  };

  // ---- calls -----------------------------------------------------------------------------------

  // A call of any route: the data of a 2xx answer, or a thrown ServiceError.
  async call<T>(method: Method, path: string, body?: Body | Schemas[keyof Schemas], options: { anonymous?: boolean; own?: boolean; noRefresh?: boolean } = {}): Promise<T> {
    const headers = new Headers({ accept: 'application/json' });
    if (body !== undefined) headers.set('content-type', 'application/json');
    const session = options.anonymous ? undefined : await this.session();
    const store = options.own && session ? session.store : this.store;
    if (store) headers.set(this.storeHeader, store);
    const request = new Request(this.shared.options.baseUrl + path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    let res: Response;
    try {
      res = options.anonymous ? await this.shared.fetch(this.withCookies(request)) : await this.send(request, options.noRefresh);
    } catch (cause) {
      if (cause instanceof ServiceError) throw cause;
      throw new ServiceError({ errCode: 'NetworkError', status: 0, message: 'The service could not be reached', cause });
    }
    const text = await res.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = text;
    }
    if (!res.ok) throw ServiceError.fromAnswer(res.status, data);
    return data as T;
  }

  // The access token to present now (refreshed first when it is about to expire).
  async freshToken(): Promise<string | undefined> {
    let session = await this.session();
    if (session && this.shared.keeper.dueForRefresh(session)) session = await this.shared.keeper.refresh(session);
    return session?.accessToken;
  }

  private async send(request: Request, noRefresh = false): Promise<Response> {
    const keeper = this.shared.keeper;
    let session = await keeper.session();
    if (session && !noRefresh && keeper.dueForRefresh(session)) session = await keeper.refresh(session);
    const retry = request.clone();
    const res = await this.shared.fetch(this.authorized(request, session));
    if (res.status !== 401 || noRefresh || !session || !keeper.canRefresh(session) || request.url.endsWith('/auth-api/refresh')) return res;
    const next = await keeper.refresh(session);
    if (!next) return res;
    return this.shared.fetch(this.authorized(retry, next));
  }

  private authorized(request: Request, session: Session | undefined): Request {
    if (session?.accessToken && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${session.accessToken}`);
    if (!request.headers.has(this.storeHeader) && this.store) request.headers.set(this.storeHeader, this.store);
    return this.withCookies(request);
  }

  private withCookies(request: Request): Request {
    return this.shared.options.cookies ? new Request(request, { credentials: 'include' }) : request;
  }

  private async signedIn(answer: SignInAnswer): Promise<SignInResult> {
    return resultOf(await this.shared.keeper.accept(this.store, answer, 'signedIn'));
  }

  // A completed factor answers the session as it now is (tokens only when they change).
  private async completed(answer: Schemas['SecondFactorDoneResponse']): Promise<SignInResult> {
    const session = await this.session();
    if (!session) throw new ServiceError({ errCode: 'NotSignedIn', status: 401, message: 'No sign-in is pending' });
    return resultOf(await this.shared.keeper.accept(session.store, answer, 'updated'));
  }

  private pageUrl(path: string, redirectUrl: string | undefined): string {
    const url = new URL(this.shared.options.baseUrl + path);
    if (this.store) url.searchParams.set('_store', this.store);
    if (redirectUrl !== undefined) url.searchParams.set('redirectUrl', redirectUrl);
    return url.toString();
  }
}

function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function navigate(url: string): void {
  const location = (globalThis as { location?: { assign(url: string): void } }).location;
  if (!location) throw new ServiceError({ errCode: 'UnexpectedAnswer', status: 0, message: `No page to leave here: open ${url} in a browser` });
  location.assign(url);
}

async function webauthn(): Promise<typeof import('@simplewebauthn/browser')> {
  try {
    return await import('@simplewebauthn/browser');
  } catch (cause) {
    throw new ServiceError({ errCode: 'PasskeyUnavailable', status: 0, message: 'Passkeys need @simplewebauthn/browser, in a browser', cause });
  }
}

export function createClient(options: ClientOptions): ServiceClient {
  return ServiceClient.create(options);
}

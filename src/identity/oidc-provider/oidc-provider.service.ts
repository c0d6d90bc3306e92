import { hkdfSync, type KeyObject } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type Provider from 'oidc-provider';
import type { Configuration, interactionPolicy as InteractionPolicy, KoaContextWithOIDC } from 'oidc-provider';
import { oidcLibrary } from './oidc-library.js';
import type { Tenant } from '../../kernel/tenant.js';
import { AuditLog, auditActor, auditContextOf } from '../../kernel/audit.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { Clock } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { OAuthClientService } from '../oauth-client/index.js';
import { OidcProviderSection, type OidcProviderSettings } from '../oauth-client/oauth-client.settings.js';
import { SessionService } from '../session/session.service.js';
import { KeyService } from '../signing-key/key.service.js';
import { StoreService } from '../store/store.service.js';
import { UserService } from '../user/user.service.js';
import { hashPresentedSecret } from './client-secret.js';
import { OidcAdapter } from './oidc-adapter.js';
import { OidcPayloadRepository } from './oidc-payload.repository.js';
import { errorPage, logoutPage, loggedOutPage } from './oidc-pages.js';

// The scopes the provider knows, and the claims each one releases.
// `acr` and `amr` (what the sign-in proved, as the service's own tokens say it: kernel/assurance.ts)
// come with `openid`, in the ID token only (the account's claims do not hold them).
export const OIDC_CLAIMS = {
  openid: ['sub', 'acr', 'amr'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  profile: ['name', 'given_name', 'family_name', 'picture'],
  roles: ['store', 'roles'],
};
const SCOPES = ['openid', 'offline_access', 'email', 'phone', 'profile', 'roles'];

// The provider keeps, beside its own models, the service session a sign-in at its pages began
// (keyed by the provider session's uid), so that its logout ends that session too.
const SERVICE_SESSION_MODEL = 'ServiceSession';

const INTERACTION_TTL = 10 * 60;
const SESSION_TTL = 24 * 60 * 60;
const CODE_TTL = 60;
// How often the signing keys are looked at again (a rotation rebuilds the store's provider).
const KEY_CHECK_MS = 60_000;
// Providers kept in memory at once (one per store and address).
const MAX_PROVIDERS = 200;

interface Built {
  provider: Provider;
  keyVersion: string;
}

interface KeySet {
  version: string;
  jwks: { keys: Record<string, unknown>[] };
  // Input keying material of the cookie keys when KEY_ENCRYPTION_SECRET is not set.
  fallbackSecret: KeyObject;
}

// One oidc-provider instance per store (its issuer, its adapter rows, its cookies), built when
// first asked for and kept, rebuilt when the service's signing keys change.
@Injectable()
export class OidcProviderService {
  private readonly logger = new Logger('OidcProvider');
  private readonly providers = new LRUCache<string, Built>({ max: MAX_PROVIDERS });
  private keySet?: KeySet;
  private keysCheckedAt = 0;
  private keysLoading?: Promise<KeySet>;
  private readonly jwkByKid = new Map<string, Record<string, unknown>>();

  constructor(
    private readonly payloads: OidcPayloadRepository,
    private readonly clients: OAuthClientService,
    private readonly keys: KeyService,
    private readonly users: UserService,
    private readonly stores: StoreService,
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  get settings(): OidcProviderSettings {
    return this.config.section(OidcProviderSection).oidcProvider;
  }

  // `base`: the service's public address (PUBLIC_URL, else the address the request reached).
  async providerFor(store: Tenant, base: string): Promise<Provider> {
    const issuer = `${base}/auth-api/oidc/${store.codename}`;
    const keySet = await this.currentKeys();
    const held = this.providers.get(issuer);
    if (held && held.keyVersion === keySet.version) return held.provider;
    const provider = this.build(await oidcLibrary(this.logger), store, issuer, keySet);
    this.providers.set(issuer, { provider, keyVersion: keySet.version });
    return provider;
  }

  private async currentKeys(): Promise<KeySet> {
    if (this.keySet && Date.now() - this.keysCheckedAt < KEY_CHECK_MS) return this.keySet;
    this.keysLoading ??= this.loadKeys().finally(() => (this.keysLoading = undefined));
    return this.keysLoading;
  }

  private async loadKeys(): Promise<KeySet> {
    const keys = await this.keys.privateKeySet();
    const jwks = keys.map(({ kid, privateKey }) => {
      let jwk = this.jwkByKid.get(kid);
      if (!jwk) {
        jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
        this.jwkByKid.set(kid, jwk);
      }
      return jwk;
    });
    for (const kid of this.jwkByKid.keys()) if (!keys.some((k) => k.kid === kid)) this.jwkByKid.delete(kid);
    this.keySet = { version: keys.map((k) => k.kid).join(','), jwks: { keys: jwks }, fallbackSecret: keys[0]!.privateKey };
    this.keysCheckedAt = Date.now();
    return this.keySet;
  }

  // Cookie signing keys for one store, derived (HKDF-SHA256) from KEY_ENCRYPTION_SECRET (and the
  // previous ones during a rotation, so cookies signed before it still verify), else from the
  // current signing key, which every replica shares.
  private cookieKeys(store: Tenant, keySet: KeySet): string[] {
    const env = this.config.env;
    const secrets: (string | Buffer)[] = env.KEY_ENCRYPTION_SECRET
      ? [env.KEY_ENCRYPTION_SECRET, ...(env.KEY_ENCRYPTION_SECRET_PREVIOUS?.split(',') ?? [])]
      : [keySet.fallbackSecret.export({ format: 'der', type: 'pkcs8' })];
    return secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, 'svc-oidc-provider-cookies', `store:${store.id}`, 32)).toString('base64url'));
  }

  private build(library: typeof import('oidc-provider'), store: Tenant, issuer: string, keySet: KeySet): Provider {
    const { Provider, interactionPolicy } = library;
    const settings = this.settings;
    const storeId = store.id;
    const mountPath = new URL(issuer).pathname;
    const lookupClient = async (clientId: string) => {
      const metadata = await this.clients.metadataFor(storeId, clientId);
      return metadata ? { ...metadata } : undefined;
    };
    const cookie = { httpOnly: true, sameSite: 'lax' as const, path: mountPath, signed: true };
    const configuration: Configuration = {
      adapter: (model: string) => new OidcAdapter(this.payloads, storeId, model, this.clock, lookupClient),
      jwks: keySet.jwks as Configuration['jwks'],
      cookies: {
        keys: this.cookieKeys(store, keySet),
        names: { session: `svc_oidc_session_${store.codename}`, interaction: `svc_oidc_interaction_${store.codename}`, resume: `svc_oidc_resume_${store.codename}` },
        long: cookie,
        short: cookie,
      },
      scopes: SCOPES,
      claims: OIDC_CLAIMS,
      acrValues: ['aal1', 'aal2'],
      extraClientMetadata: { properties: ['first_party'] },
      features: {
        devInteractions: { enabled: false },
        // A confidential client of the store may introspect the store's tokens (a resource server
        // asks about tokens given to others); a public client only its own.
        introspection: { enabled: true, allowedPolicy: async (_ctx, client, token) => client.clientAuthMethod !== 'none' || token.clientId === client.clientId },
        // A token is revoked by the client it was given to.
        revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
        clientCredentials: { enabled: true },
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: async (ctx, form) => {
            ctx.type = 'html';
            ctx.body = logoutPage(form);
          },
          postLogoutSuccessSource: async (ctx) => {
            ctx.type = 'html';
            ctx.body = loggedOutPage();
          },
        },
      },
      pkce: { required: () => true },
      ttl: {
        AccessToken: settings.accessTokenMinutes * 60,
        ClientCredentials: settings.accessTokenMinutes * 60,
        IdToken: settings.idTokenMinutes * 60,
        RefreshToken: settings.refreshTokenDays * 24 * 60 * 60,
        AuthorizationCode: CODE_TTL,
        Interaction: INTERACTION_TTL,
        Session: SESSION_TTL,
        // A grant lives as long as the refresh tokens it may give, else as long as the session.
        Grant: (_ctx, grant) => ((grant.getOIDCScope() ?? '').split(' ').includes('offline_access') ? settings.refreshTokenDays * 24 * 60 * 60 : SESSION_TTL),
      },
      issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
      rotateRefreshToken: true,
      loadExistingGrant: async (ctx) => {
        const { oidc } = ctx;
        const decided = oidc.result?.consent?.grantId;
        const remembered = settings.consentRemembered ? oidc.session?.grantIdFor(oidc.client!.clientId) : undefined;
        const grantId = decided ?? remembered;
        if (grantId) return oidc.provider.Grant.find(grantId);
        // The service's own applications are not asked for consent.
        if (oidc.client?.metadata().first_party === true && oidc.session?.accountId) {
          const grant = new oidc.provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId });
          grant.addOIDCScope(oidc.requestParamScopes ? [...oidc.requestParamScopes].join(' ') : 'openid');
          await grant.save();
          return grant;
        }
        return undefined;
      },
      findAccount: async (_ctx, sub) => {
        const current = await this.stores.findById(storeId);
        if (!current?.isActive) return undefined;
        const user = await this.users.findById(storeId, sub);
        if (!user?.isActive) return undefined;
        const picture = user.avatar && user.avatar.startsWith('/') ? `${new URL(issuer).origin}${user.avatar}` : user.avatar;
        const fullname = user.fullname ?? ([user.name, user.surname].filter(Boolean).join(' ') || undefined);
        return {
          accountId: user.id,
          claims: async () => ({
            sub: user.id,
            email: user.email ?? undefined,
            email_verified: user.email ? user.emailVerified : undefined,
            phone_number: user.mobile ?? undefined,
            phone_number_verified: user.mobile ? user.mobileVerified : undefined,
            name: fullname,
            given_name: user.name ?? undefined,
            family_name: user.surname ?? undefined,
            picture: picture || undefined,
            store: current.codename,
            roles: user.roles,
          }),
        };
      },
      interactions: { policy: this.policy(interactionPolicy, storeId), url: async (_ctx, interaction) => `${issuer}/interaction/${interaction.uid}` },
      renderError: async (ctx, out, error) => {
        if (out.error === 'server_error') this.logger.error({ err: error, issuer }, 'the OpenID Connect provider failed');
        ctx.type = 'html';
        ctx.body = errorPage(out.error, out.error_description);
      },
    };
    const provider = new Provider(issuer, configuration);
    // Forwarded headers are written by the service itself (OidcProviderMiddleware), from the issuer.
    provider.proxy = true;
    provider.on('server_error', (_ctx: unknown, err: Error) => this.logger.error({ err, issuer }, 'the OpenID Connect provider failed'));
    // Koa's own error event (its default handler writes to the console).
    (provider as unknown as NodeJS.EventEmitter).on('error', (err: Error) => this.logger.error({ err, issuer }, 'the OpenID Connect provider failed'));
    // The provider's addresses are below its mount path (app.ts hands it the request below it).
    provider.use((ctx, next) => {
      ctx.mountPath = mountPath;
      return next();
    });
    provider.use(hashPresentedSecret);
    provider.use(async (ctx, next) => {
      await next();
      await this.afterRoute(ctx as KoaContextWithOIDC, storeId);
    });
    provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
      if (ctx.oidc.params?.logout && ctx.oidc.session?.uid) ctx.state.endedSessionUid = ctx.oidc.session.uid;
    });
    return provider;
  }

  // The provider's prompts, with one more reason to ask for a sign-in: the service session the
  // provider session began has ended (a logout at the API, a new password, an administrator, its
  // expiry). Without it the provider's cookie would go on signing the user in to applications.
  private policy(interactionPolicy: typeof InteractionPolicy, storeId: string): InteractionPolicy.DefaultPolicy {
    const policy = interactionPolicy.base();
    policy.get('login')!.checks.add(
      new interactionPolicy.Check('service_session_ended', 'the sign-in at the service has ended', 'login_required', async (ctx) => {
        const { uid, accountId } = ctx.oidc.session ?? {};
        // No session yet, or a sign-in just made at the pages (its service session is recorded
        // once this step is done).
        if (!uid || !accountId || typeof ctx.oidc.result?.serviceSessionId === 'string') return interactionPolicy.Check.NO_NEED_TO_PROMPT;
        return (await this.serviceSessionAlive(storeId, uid)) ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
      }),
    );
    return policy;
  }

  private async serviceSessionAlive(storeId: string, uid: string): Promise<boolean> {
    const mapped = await this.payloads.find(storeId, SERVICE_SESSION_MODEL, uid, this.clock.now());
    const sessionId = mapped?.payload.sessionId;
    return typeof sessionId === 'string' && (await this.sessions.get(storeId, sessionId)) !== undefined;
  }

  // After a sign-in's return (resume): which service session it began. After a logout: that
  // session ends too.
  private async afterRoute(ctx: KoaContextWithOIDC, storeId: string): Promise<void> {
    const route = ctx.oidc?.route;
    if (route === 'resume') {
      const serviceSessionId = ctx.oidc.result?.serviceSessionId;
      const uid = ctx.oidc.session?.uid;
      if (typeof serviceSessionId !== 'string' || !uid) return;
      const previous = await this.payloads.find(storeId, SERVICE_SESSION_MODEL, uid, this.clock.now());
      const previousId = previous?.payload.sessionId;
      await this.payloads.upsert(storeId, SERVICE_SESSION_MODEL, uid, { sessionId: serviceSessionId }, { uid, expiresAt: new Date(this.clock.now().getTime() + SESSION_TTL * 1000) });
      if (typeof previousId === 'string' && previousId !== serviceSessionId) await this.endServiceSession(storeId, previousId, ctx);
    } else if (route === 'end_session_confirm' && typeof ctx.state.endedSessionUid === 'string') {
      const uid = ctx.state.endedSessionUid;
      const mapped = await this.payloads.find(storeId, SERVICE_SESSION_MODEL, uid, this.clock.now());
      await this.payloads.destroy(storeId, SERVICE_SESSION_MODEL, uid);
      if (typeof mapped?.payload.sessionId === 'string') await this.endServiceSession(storeId, mapped.payload.sessionId, ctx);
    }
  }

  private async endServiceSession(storeId: string, sessionId: string, ctx: KoaContextWithOIDC): Promise<void> {
    const session = await this.sessions.get(storeId, sessionId);
    if (!session) return;
    // The Express request under the provider's context: its address as TRUST_PROXY decides.
    const context = auditContextOf((ctx.req as ContextRequest).ctx, sessionId);
    await this.sessions.end(storeId, { id: sessionId }, (_count, tx) =>
      this.audit.record({ storeId, action: 'user.logout', outcome: 'success', actor: auditActor(session), target: { type: 'session', id: sessionId } }, context, tx),
    );
  }
}

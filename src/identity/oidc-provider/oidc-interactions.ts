import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { acrOf, amrOf, signInPending } from '../../kernel/assurance.js';
import { AuditLog, auditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import type { SessionData } from '../../kernel/principal.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import type { Tenant } from '../../kernel/tenant.js';
import { AuthService } from '../auth/auth.service.js';
import { MfaService } from '../mfa/mfa.service.js';
import { SessionService } from '../session/session.service.js';
import { consentPage, loginPage, messagePage, totpPage } from './oidc-pages.js';

// A form of these pages is a few fields.
const FORM_LIMIT = 8 * 1024;
const INTERACTION_PATH = /^\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|totp|confirm|abort))?$/;

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

// The provider's sign-in pages at `{issuer}/interaction/{uid}`: the password (with the service's
// own login: its rate limits, lockout and audit entries), the authenticator app's code when the
// account has one, then consent. A sign-in here is a session of the service, as a login is.
@Injectable()
export class OidcInteractions {
  constructor(
    private readonly auth: AuthService,
    private readonly mfa: MfaService,
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
  ) {}

  // Whether `path` (below the issuer) is one of these pages.
  handles(path: string): boolean {
    return path.startsWith('/interaction/');
  }

  async handle(provider: Provider, store: Tenant, req: ContextRequest, res: Response, path: string): Promise<void> {
    const match = INTERACTION_PATH.exec(path);
    const step = match?.[2];
    if (!match || (req.method !== 'GET' && req.method !== 'POST') || (req.method === 'GET') !== (step === undefined)) {
      return page(res, 404, messagePage('Not found', 'There is no such page.'));
    }
    let details: Interaction;
    try {
      details = await provider.interactionDetails(req, res);
    } catch {
      return page(res, 400, messagePage('Sign-in expired', 'This sign-in has expired or was already used. Start again from the application.'));
    }
    if (details.uid !== match[1]) return page(res, 400, messagePage('Sign-in expired', 'This sign-in has expired or was already used. Start again from the application.'));
    const base = `${provider.issuer}/interaction/${details.uid}`;
    const urls = { login: `${base}/login`, totp: `${base}/totp`, confirm: `${base}/confirm`, abort: `${base}/abort` };

    if (step === 'abort') return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, { mergeWithLastSubmission: false });
    const form = step ? await readForm(req) : undefined;
    if (step && !form) return page(res, 400, messagePage('Bad request', 'The form could not be read.'));

    if (details.prompt.name === 'login') {
      if (step === 'login') return this.password(provider, store, req, res, form!, urls);
      if (step === 'totp') return this.totp(provider, store, req, res, form!, details, urls);
      return page(res, 200, loginPage({ action: urls.login, abort: urls.abort }));
    }
    if (details.prompt.name === 'consent') {
      if (step === 'confirm') return this.consent(provider, store, req, res, details);
      const scopes = missingScopes(details);
      return page(res, 200, consentPage({ action: urls.confirm, abort: urls.abort, client: String(details.params.client_id), scopes }));
    }
    return page(res, 400, messagePage('Sign-in error', 'This sign-in cannot continue. Start again from the application.'));
  }

  private async password(provider: Provider, store: Tenant, req: ContextRequest, res: Response, form: URLSearchParams, urls: Urls): Promise<void> {
    const username = form.get('username') ?? '';
    let session: SessionData;
    try {
      const result = await this.auth.login(store, { username, password: form.get('password') ?? '' }, { ip: req.ip, userAgent: req.headers['user-agent'] }, auditContext(req));
      session = result.session;
    } catch (error) {
      return page(res, statusOf(error), loginPage({ action: urls.login, abort: urls.abort, username, error: loginMessage(error) }));
    }
    if (session.sessionNeedsTotp2FA) {
      // The pending login is kept in the interaction (server side) until its code comes.
      await provider.interactionResult(req, res, { pendingSessionId: session.sessionId }, { mergeWithLastSubmission: false });
      return page(res, 200, totpPage({ action: urls.totp, abort: urls.abort }));
    }
    return this.finishLogin(provider, req, res, session, urls);
  }

  private async totp(provider: Provider, store: Tenant, req: ContextRequest, res: Response, form: URLSearchParams, details: Interaction, urls: Urls): Promise<void> {
    const pendingId = details.result?.pendingSessionId;
    const pending = typeof pendingId === 'string' ? await this.sessions.get(store.id, pendingId) : undefined;
    if (!pending?.sessionNeedsTotp2FA) return page(res, 400, loginPage({ action: urls.login, abort: urls.abort, error: 'Sign in again.' }));
    let session: SessionData;
    try {
      // The app's code, or one of the recovery codes (each good once).
      const recoveryCode = form.get('recoveryCode');
      session =
        recoveryCode !== null
          ? await this.mfa.recover(pending, recoveryCode, auditContext(req, pending.sessionId))
          : await this.mfa.verify(pending, form.get('code') ?? '', auditContext(req, pending.sessionId));
    } catch (error) {
      if (error instanceof AppError && error.status === 429) return page(res, 429, loginPage({ action: urls.login, abort: urls.abort, error: 'Too many wrong codes. Sign in again.' }));
      if (error instanceof AppError && error.status < 500) return page(res, 400, totpPage({ action: urls.totp, abort: urls.abort, error: 'Wrong code. Try again.' }));
      throw error;
    }
    return this.finishLogin(provider, req, res, session, urls);
  }

  // A session that still owes a factor these pages do not offer (a code by email or SMS, a
  // passkey alone, an enrolment) is ended rather than left half open.
  private async finishLogin(provider: Provider, req: ContextRequest, res: Response, session: SessionData, urls: Urls): Promise<void> {
    if (signInPending(session)) {
      await this.sessions.end(session.storeId, { id: session.sessionId });
      return page(res, 403, loginPage({ action: urls.login, abort: urls.abort, error: 'This account needs a second step these pages do not offer yet. Sign in with the application instead.' }));
    }
    const result: InteractionResults = {
      login: { accountId: session.userId, amr: amrOf(session.amr ?? []), acr: acrOf(session), ...(session.authTime && { ts: Math.floor(Date.parse(session.authTime) / 1000) }) },
      serviceSessionId: session.sessionId,
    };
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }

  private async consent(provider: Provider, store: Tenant, req: ContextRequest, res: Response, details: Interaction): Promise<void> {
    const { prompt, params, session } = details;
    const accountId = session?.accountId;
    if (!accountId) return page(res, 400, messagePage('Sign-in expired', 'Start again from the application.'));
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: String(params.client_id) });
    if (!grant) return page(res, 400, messagePage('Sign-in expired', 'Start again from the application.'));
    const missing = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    // The password and TOTP steps record the sign-in (user.login.succeeded) without the client:
    // this entry names it, under the sign-in's session when it happened in this authorization.
    const signedIn = details.lastSubmission?.serviceSessionId;
    const clientId = String(params.client_id);
    await this.audit.record(
      {
        storeId: store.id,
        action: 'oauth.consent.granted',
        outcome: 'success',
        actor: { type: 'user', id: accountId },
        target: { type: 'oauthConsent', id: grantId },
        details: { clientId, scopes: missing.missingOIDCScope ?? [] },
      },
      auditContext(req, typeof signedIn === 'string' ? signedIn : null),
    );
    return provider.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
  }
}

interface Urls {
  login: string;
  totp: string;
  confirm: string;
  abort: string;
}

function missingScopes(details: Interaction): string[] {
  const missing = (details.prompt.details as { missingOIDCScope?: string[] }).missingOIDCScope ?? [];
  return missing.length ? missing : String(details.params.scope ?? 'openid').split(' ');
}

// The same words for an unknown account and a wrong password.
function loginMessage(error: unknown): string {
  if (!(error instanceof AppError)) throw error;
  if (error.status === 429) return 'Too many attempts. Try again later.';
  if (error.status >= 500) return 'Signing in is unavailable right now. Try again later.';
  if (error.status === 403) return 'This account cannot sign in here.';
  return 'Wrong username or password.';
}

function statusOf(error: unknown): number {
  return error instanceof AppError ? error.status : 500;
}

function page(res: Response, status: number, html: string): void {
  res.status(status).type('html').send(html);
}

async function readForm(req: ContextRequest): Promise<URLSearchParams | undefined> {
  if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

import { randomUUID } from 'node:crypto';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { AppConfig } from '../../platform/config/app-config.js';
import type { SocialProviderName } from '../../platform/config/social-settings.js';
import type { SocialProfile } from './social-profile.js';
import { providerErrorCode, providerNotFound, type SocialFailure } from './social.errors.js';
import { SocialService, type SocialFlow } from './social.service.js';
import { createSocialStrategy, SocialStrategies, type FlowRequest } from './social.strategies.js';

// What the callback learned, on `req.user`.
export type SocialOutcome = { provider: string; flow?: SocialFlow } & ({ profile: SocialProfile } | { error: SocialFailure });

type Guard = CanActivate;

// Runs the provider's passport strategy through @nestjs/passport: on the start route it
// redirects to the provider (the response ends there), on the callback it verifies the state
// and the code and leaves a SocialOutcome on the request instead of throwing, because the
// browser must land on the client's callback page either way.
@Injectable()
export class SocialPassportGuard implements CanActivate {
  private readonly guards = new Map<string, Guard>();

  constructor(
    private readonly social: SocialService,
    private readonly config: AppConfig,
    strategies: SocialStrategies,
  ) {
    const instance = randomUUID();
    for (const [provider, setting] of config.socialLogin.providers) {
      const name = `${provider}:${instance}`;
      createSocialStrategy(name, setting, config.publicUrl(`/auth-api/auth/${provider}/callback`), {
        begin: (req, verifier) =>
          social.beginFlow({ provider, storeId: req.ctx.store!.id, redirectUrl: req.socialRedirectUrl!, ...(verifier && { verifier }) }),
        take: (_req, state) => social.takeFlow(state, provider),
      }, strategies);
      // What a failed exchange could quote: the code of the return, this provider's secret.
      const failed = (err: unknown, req: FlowRequest) =>
        social.providerFailed(provider, 'callback', err, { requestId: req.ctx.requestId, secrets: [codeOf(req), setting.clientSecret, req.socialFlow?.verifier] });
      this.guards.set(provider, new (outcomeGuard(name, provider as SocialProviderName, failed))());
    }
  }

  canActivate(context: ExecutionContext): Promise<boolean> | boolean {
    const req = context.switchToHttp().getRequest<FlowRequest>();
    const provider = String(req.params.provider);
    const guard = this.guards.get(provider);
    if (!guard) throw providerNotFound(provider);
    if (!req.path.endsWith('/callback')) {
      const requested = req.query.redirectUrl;
      req.socialRedirectUrl = this.social.redirectUrl(typeof requested === 'string' ? requested : requested === undefined ? undefined : '');
      return guard.canActivate(context) as Promise<boolean>;
    }
    return this.callback(provider, req, () => guard.canActivate(context) as Promise<boolean>);
  }

  // A return without a code (the person declined, or a provider error) ends the flow here:
  // handed to passport, it would start a new one.
  private async callback(provider: string, req: FlowRequest, run: () => Promise<boolean>): Promise<boolean> {
    const field = (name: string): unknown => req.query[name] ?? (req.body as Record<string, unknown> | undefined)?.[name];
    if (typeof field('code') === 'string' && field('code')) {
      const user = (req.body as Record<string, unknown> | undefined)?.user;
      // Apple's first return carries the name as JSON; its strategy parses it unguarded.
      if (user !== undefined && !isJsonObject(user)) delete (req.body as Record<string, unknown>).user;
      return run();
    }
    const flow = await this.social.takeFlow(field('state'), provider);
    // The provider's standard code goes on to the client, its description only to the log.
    const error: SocialFailure = !flow ? 'state_mismatch' : providerErrorCode(field('error'));
    if (error !== 'state_mismatch' && error !== 'access_denied') {
      const words = { error: field('error'), error_description: field('error_description') };
      this.social.providerFailed(provider, 'authorization', typeof words.error === 'string' ? words : { error: 'no_code', message: 'the provider returned without a code or an error' }, { requestId: req.ctx.requestId });
    }
    (req as { user?: SocialOutcome }).user = { provider, flow, error };
    return true;
  }
}

function isJsonObject(value: unknown): boolean {
  try {
    const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : undefined;
    return !!parsed && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

function codeOf(req: FlowRequest): string | undefined {
  const code = req.query.code ?? (req.body as Record<string, unknown> | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function outcomeGuard(name: string, provider: SocialProviderName, failed: (err: unknown, req: FlowRequest) => void) {
  return class extends AuthGuard(name) {
    override getAuthenticateOptions() {
      return { session: false };
    }

    // Never throws: the controller turns a failure into the client's `error` parameter.
    override handleRequest<T>(err: unknown, user: unknown, info: unknown, context: ExecutionContext): T {
      const req = context.switchToHttp().getRequest<FlowRequest>();
      const flow = req.socialFlow;
      if (!err && user) return { provider, flow, profile: user } as T;
      // The token or profile request failed: the provider refused the code, or did not answer.
      if (err) failed(err, req);
      const message = (info as { message?: string } | undefined)?.message;
      const error: SocialFailure = err ? 'provider_error' : message === 'state_mismatch' || !flow ? 'state_mismatch' : req.query.error ? providerErrorCode(req.query.error) : 'login_failed';
      return { provider, flow, error } as T;
    }
  };
}

import type { IncomingMessage } from 'node:http';

// A sign-in provider ("Sign in with X"): the contract between the service and one provider, the
// built-in ones (src/identity/social/providers/) and those an extension registers in code
// (`SocialProviderRegistry.register` in its module's onModuleInit). This file imports nothing of
// the service, so an extension can depend on it alone.

// What the service keeps of a provider's answer. `emailVerified` is true only when the provider
// says so; it never links accounts by itself.
export interface SocialProfile {
  // The provider's stable id of the person: accounts are linked by it (never by email).
  providerUserId: string;
  email?: string;
  emailVerified: boolean;
  fullname?: string;
  // https only; anything else is dropped.
  avatar?: string;
}

// Starting a sign-in: the provider answers the address to send the browser to.
export interface SocialAuthorizationRequest {
  // This service's callback for the provider, absolute (`{PUBLIC_URL}/auth-api/auth/<name>/callback`,
  // else the address the request came to); the authorization request must name it.
  callbackUrl: string;
  // Creates the flow's single-use `state`, bound to the targeted store and kept 10 minutes; the
  // PKCE verifier and nonce given are kept with it, server side, and handed back on the return.
  beginFlow(keep?: { verifier?: string; nonce?: string }): Promise<string>;
  // The browser's request (an Express request), for a provider that reads it.
  request: IncomingMessage;
}

// The provider's return with an authorization code: the service has checked the `state` and
// taken its flow (once) before the provider is asked.
export interface SocialCallback {
  // As in the authorization request.
  callbackUrl: string;
  // The return's parameters: its query, or its form post's fields (`code`, `state`...).
  params: Readonly<Record<string, unknown>>;
  // The flow begun for this state: what `beginFlow` kept.
  flow: { state: string; verifier?: string; nonce?: string };
  request: IncomingMessage;
}

export interface SocialProvider {
  // Lowercase letters, digits, `_` and `-`, at most 32 characters: the path segment
  // (`/auth-api/auth/<name>`), the `provider` the client hears and the key accounts are linked
  // under (renaming a provider unlinks its accounts). `sso` is taken.
  readonly name: string;
  // The provider returns with an HTML form post (`response_mode=form_post`, as Apple does).
  readonly formPostCallback?: boolean;
  // Values a failure's message could quote (the client secret): masked in the log.
  readonly secrets?: readonly (string | undefined)[];
  authorizationUrl(request: SocialAuthorizationRequest): Promise<string>;
  // Exchanges the code: the person's profile, or undefined when the provider proved no one
  // (the browser hears `login_failed`). A failure throws: a SocialProviderError says which step
  // and what the browser hears; any other error is `provider_error`. Either is logged at warn.
  profile(callback: SocialCallback): Promise<SocialProfile | undefined>;
}

// What the client's callback hears of a failed step (docs/authentication.md, "The error of a
// failed sign-in").
export type SocialProviderFailure = 'provider_unavailable' | 'token_exchange_failed' | 'userinfo_failed' | 'subject_missing' | 'provider_error';

// A failed step with the provider: `stage` names it in the log (`discovery`, `token`,
// `userinfo`...), `failure` is the word the browser hears, `cause` the provider's error (logged
// with its code and description, the exchange's secrets masked). Thrown by `authorizationUrl`, it
// answers 502 SocialProviderUnavailable.
export class SocialProviderError extends Error {
  constructor(
    readonly stage: string,
    readonly failure: SocialProviderFailure,
    override readonly cause: unknown,
  ) {
    super(`${stage} failed`);
    this.name = 'SocialProviderError';
  }
}

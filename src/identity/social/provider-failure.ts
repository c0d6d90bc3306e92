// What the operator is told of a failed exchange with a social or single sign-on provider: the
// provider's error code and description, or the kind of failure (network, unusable document).
// Never the values of the exchange: the authorization code, tokens, the client secret and the
// PKCE verifier are masked wherever a message would quote them.

interface FailureLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  status?: unknown;
  // openid-client's ResponseBodyError and AuthorizationResponseError: the provider's own words.
  error?: unknown;
  error_description?: unknown;
  cause?: unknown;
  // passport-oauth2's InternalOAuthError: the HTTP answer or the socket error.
  oauthError?: unknown;
}

export type ProviderFailureFields = Record<string, string | number>;

const MAX_TEXT = 300;

export function providerFailure(err: unknown, secrets: readonly (string | undefined)[] = []): ProviderFailureFields {
  const e: FailureLike = typeof err === 'object' && err !== null ? err : { message: String(err) };
  const causes = causeChain(e);
  const first = (causes[0] ?? {}) as FailureLike & { statusCode?: unknown; attribute?: unknown; expected?: unknown; body?: { issuer?: unknown } };
  const mask = masker(secrets);
  const fields: Record<string, string | number | undefined> = {
    // `error` is the provider's code (invalid_grant...); passport's TokenError keeps it in `code`.
    error: text(e.error) ?? text(e.code) ?? text(e.name) ?? 'Error',
    description: text(e.error_description) ?? text(e.message),
    // passport's TokenError says 500 whatever the provider answered: only real statuses.
    status: e.name === 'TokenError' ? undefined : [e, ...causes].map((c) => num(c.status) ?? num((c as { statusCode?: unknown }).statusCode)).find((n) => n !== undefined),
    // What lies under it: a socket error (fetch failed, ECONNREFUSED), the check that failed.
    cause: causes.map((c) => [text(c.code) ?? text(c.name), text(c.message)].filter(Boolean).join(': ')).filter(Boolean).join('; ') || undefined,
  };
  // A discovery document naming another issuer: both spellings, so the fix is obvious.
  if (first.attribute === 'issuer') {
    fields.expectedIssuer = text(first.expected);
    fields.discoveredIssuer = text(first.body?.issuer);
  }
  const out: ProviderFailureFields = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined && value !== '') out[key] = typeof value === 'string' ? mask(value).slice(0, MAX_TEXT) : value;
  return out;
}

// The errors under this one (`cause`, passport's `oauthError`), a few levels deep.
function causeChain(e: FailureLike): FailureLike[] {
  const chain: FailureLike[] = [];
  for (let c = e.cause ?? e.oauthError; typeof c === 'object' && c !== null && chain.length < 4; c = (c as FailureLike).cause) chain.push(c as FailureLike);
  return chain;
}

function masker(secrets: readonly (string | undefined)[]): (value: string) => string {
  // Short values would mask ordinary words; codes, secrets and verifiers are long.
  const known = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8);
  return (value) => known.reduce((v, secret) => v.split(secret).join('[redacted]'), value);
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

import type { GrantType, PublicJwks, TokenEndpointAuthMethod } from './oauth-client.entity.js';

// What makes a client's metadata hold together, as pure functions: each answers the problem in
// words (the OAuthClientInvalid detail), or undefined when there is none.

export const MAX_URIS = 20;
export const MAX_JWKS_KEYS = 10;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// Members of a private or symmetric key (RFC 7518 §6): a JWK Set given to the service is public.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const KEY_TYPES = new Set(['RSA', 'EC', 'OKP']);

export function isConfidential(method: TokenEndpointAuthMethod): boolean {
  return method !== 'none';
}

// Whether the client authenticates with a secret the service issues.
export function hasSecret(method: TokenEndpointAuthMethod): boolean {
  return method === 'client_secret_basic' || method === 'client_secret_post';
}

// https anywhere; http on a loopback host only (RFC 8252 §7.3); for a public (native) client
// also a private-use scheme in reverse-domain form, such as `com.example.app:/callback`
// (RFC 8252 §7.1). Never a fragment or credentials.
export function redirectUriProblem(raw: string, method: TokenEndpointAuthMethod, field: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${field}: "${raw}" is not an absolute URI`;
  }
  if (raw.includes('#')) return `${field}: "${raw}" has a fragment`;
  if (url.username || url.password) return `${field}: "${raw}" has credentials in it`;
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return url.hostname ? undefined : `${field}: "${raw}" has no host`;
  if (scheme === 'http') return LOOPBACK_HOSTS.has(url.hostname) ? undefined : `${field}: "${raw}" uses http on a host that is not loopback (127.0.0.1, [::1], localhost); use https`;
  if (method !== 'none') return `${field}: "${raw}" uses the scheme "${scheme}": only clients with tokenEndpointAuthMethod "none" (native apps) may use a private-use scheme`;
  if (!scheme.includes('.')) return `${field}: "${raw}" uses the scheme "${scheme}": a private-use scheme is a reverse domain name, such as com.example.app`;
  return undefined;
}

export function urisProblem(uris: readonly string[], method: TokenEndpointAuthMethod, field: string): string | undefined {
  if (uris.length > MAX_URIS) return `${field}: at most ${MAX_URIS}`;
  if (new Set(uris).size !== uris.length) return `${field}: a URI is listed twice`;
  for (const uri of uris) {
    const problem = redirectUriProblem(uri, method, field);
    if (problem) return problem;
  }
  return undefined;
}

export function grantsProblem(grants: readonly GrantType[], method: TokenEndpointAuthMethod, redirectUris: readonly string[]): string | undefined {
  if (!grants.length) return 'grantTypes: at least one';
  if (grants.includes('client_credentials') && !isConfidential(method)) return 'grantTypes: client_credentials needs a confidential client (tokenEndpointAuthMethod other than "none")';
  if (grants.includes('refresh_token') && !grants.includes('authorization_code')) return 'grantTypes: refresh_token needs authorization_code';
  if (grants.includes('authorization_code') && !redirectUris.length) return 'redirectUris: authorization_code needs at least one';
  return undefined;
}

// Required with private_key_jwt, and then public keys only; refused with the other methods.
export function jwksProblem(jwks: unknown, method: TokenEndpointAuthMethod): string | undefined {
  if (method !== 'private_key_jwt') return jwks === undefined || jwks === null ? undefined : 'jwks: only a private_key_jwt client has one';
  if (jwks === undefined || jwks === null) return 'jwks: required with private_key_jwt';
  if (typeof jwks !== 'object' || Array.isArray(jwks)) return 'jwks: a JWK Set, { "keys": [...] }';
  const keys = (jwks as Partial<PublicJwks>).keys;
  if (!Array.isArray(keys)) return 'jwks: a JWK Set, { "keys": [...] }';
  if (Object.keys(jwks).some((k) => k !== 'keys')) return 'jwks: a JWK Set holds "keys" only';
  if (!keys.length || keys.length > MAX_JWKS_KEYS) return `jwks: 1 to ${MAX_JWKS_KEYS} keys`;
  for (const [i, key] of keys.entries()) {
    if (!key || typeof key !== 'object' || Array.isArray(key)) return `jwks.keys[${i}]: not a JWK`;
    if (typeof key.kty !== 'string' || !KEY_TYPES.has(key.kty)) return `jwks.keys[${i}]: kty must be RSA, EC or OKP`;
    const secret = PRIVATE_MEMBERS.filter((m) => m in key);
    if (secret.length) return `jwks.keys[${i}]: a public key only (private members: ${secret.join(', ')})`;
    if (key.use !== undefined && key.use !== 'sig') return `jwks.keys[${i}]: use must be "sig"`;
  }
  if (JSON.stringify(jwks).length > 20_000) return 'jwks: at most 20000 characters';
  return undefined;
}

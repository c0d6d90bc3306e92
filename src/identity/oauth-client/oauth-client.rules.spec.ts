import { describe, expect, it } from '@jest/globals';
import { grantsProblem, jwksProblem, redirectUriProblem } from './oauth-client.rules.js';

// The edges of the rules the e2e suite (test/oauth-clients.e2e-spec.ts) shows one case of each.
describe('redirect URIs', () => {
  const ok = (uri: string, method: 'none' | 'client_secret_basic' = 'client_secret_basic') => redirectUriProblem(uri, method, 'redirectUris') === undefined;

  it('https anywhere, http on loopback hosts only (any port)', () => {
    expect(ok('https://app.example.com/cb?x=1')).toBe(true);
    expect(ok('http://127.0.0.1/cb')).toBe(true);
    expect(ok('http://127.0.0.1:51004/cb')).toBe(true);
    expect(ok('http://[::1]:8080/cb')).toBe(true);
    expect(ok('http://localhost/cb')).toBe(true);
    expect(ok('http://127.0.0.2/cb')).toBe(false);
    expect(ok('http://localhost.example.com/cb')).toBe(false);
    expect(ok('http://10.0.0.1/cb')).toBe(false);
  });

  it('no fragment, even an empty one; no credentials', () => {
    expect(ok('https://app.example.com/cb#')).toBe(false);
    expect(ok('https://app.example.com/cb#a')).toBe(false);
    expect(ok('https://u@app.example.com/cb')).toBe(false);
  });

  it('private-use schemes: reverse-domain, for public clients only', () => {
    expect(ok('com.example.app:/callback', 'none')).toBe(true);
    expect(ok('com.example.app:/callback')).toBe(false);
    expect(ok('myapp:/callback', 'none')).toBe(false);
    expect(ok('javascript:alert(1)', 'none')).toBe(false);
    expect(ok('data:text/html,x', 'none')).toBe(false);
    expect(ok('callback', 'none')).toBe(false);
  });
});

describe('grant types', () => {
  it('hold together with the method and the redirect URIs', () => {
    expect(grantsProblem(['authorization_code', 'refresh_token'], 'none', ['https://a.example/cb'])).toBeUndefined();
    expect(grantsProblem(['client_credentials'], 'private_key_jwt', [])).toBeUndefined();
    expect(grantsProblem(['client_credentials'], 'none', [])).toMatch(/confidential/);
    expect(grantsProblem(['refresh_token'], 'client_secret_basic', ['https://a.example/cb'])).toMatch(/needs authorization_code/);
    expect(grantsProblem(['authorization_code'], 'client_secret_basic', [])).toMatch(/at least one/);
    expect(grantsProblem([], 'client_secret_basic', [])).toMatch(/at least one/);
  });
});

describe('JWK Sets', () => {
  const key = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
  it('public keys only, with private_key_jwt only', () => {
    expect(jwksProblem({ keys: [key] }, 'private_key_jwt')).toBeUndefined();
    expect(jwksProblem(undefined, 'client_secret_basic')).toBeUndefined();
    expect(jwksProblem({ keys: [key] }, 'none')).toMatch(/only a private_key_jwt/);
    expect(jwksProblem({ keys: [] }, 'private_key_jwt')).toMatch(/1 to 10 keys/);
    expect(jwksProblem([key], 'private_key_jwt')).toMatch(/a JWK Set/);
    expect(jwksProblem({ keys: [key], extra: 1 }, 'private_key_jwt')).toMatch(/"keys" only/);
    expect(jwksProblem({ keys: [{ ...key, d: 'secret' }] }, 'private_key_jwt')).toMatch(/private members: d/);
    expect(jwksProblem({ keys: [{ ...key, use: 'enc' }] }, 'private_key_jwt')).toMatch(/use must be "sig"/);
    expect(jwksProblem({ keys: ['x'] }, 'private_key_jwt')).toMatch(/not a JWK/);
  });
});

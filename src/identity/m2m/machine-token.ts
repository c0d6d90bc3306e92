import { createHash, randomUUID, type KeyObject } from 'node:crypto';
import { decodeJwt, errors, jwtVerify, SignJWT } from 'jose';

// Machine-to-machine tokens: Ed25519-signed JWTs (alg EdDSA) from `<service>-service`, valid
// 15 minutes, for one request: bound to its method, its path (with the query string) and the
// exact body by its MD5 (the spec's choice: it binds, it is not what makes the token
// unforgeable; the signature is), and used once (the service remembers each `jti` until the
// token expires). Other services mint one per request with `mintMachineToken` and send it in
// the `<project>-machine-token` header.

export const MACHINE_TOKEN_LIFETIME_S = 15 * 60;

export function payloadHash(body: string | Buffer | undefined): string {
  return createHash('md5').update(body ?? '').digest('hex');
}

export function issuerOf(service: string): string {
  return `${service}-service`;
}

export interface MintOptions {
  service: string;
  // Ed25519 private key (node:crypto KeyObject, e.g. createPrivateKey(pem)).
  privateKey: KeyObject;
  // The request the token is for: its method and its path as the service receives it,
  // query string included (`/auth-api/validateapikey`).
  method: string;
  path: string;
  // The exact bytes of the request body that will be sent ('' or undefined for none).
  body?: string | Buffer;
  now?: Date;
}

export function mintMachineToken({ service, privateKey, method, path, body, now = new Date() }: MintOptions): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ method: method.toUpperCase(), path, bodyHash: payloadHash(body) })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer(issuerOf(service))
    .setIssuedAt(iat)
    .setExpirationTime(iat + MACHINE_TOKEN_LIFETIME_S)
    .setJti(randomUUID())
    .sign(privateKey);
}

export class MachineTokenError extends Error {}

export interface VerifiedMachineToken {
  service: string;
  jti: string;
  // Seconds since the epoch: how long the jti must be remembered.
  exp: number;
}

// The verified token, or MachineTokenError: unknown issuer, bad signature, expired, or a
// request (method, path, body) that is not the one the token was made for. Replays are the
// caller's to refuse, by the jti.
export async function verifyMachineToken(
  token: string,
  options: { publicKeys: ReadonlyMap<string, KeyObject>; method: string; path: string; body?: string | Buffer; now: Date },
): Promise<VerifiedMachineToken> {
  try {
    // The issuer (read before verifying) only picks the key; the signature decides.
    const issuer = decodeJwt(token).iss;
    const service = issuer?.endsWith('-service') ? issuer.slice(0, -'-service'.length) : undefined;
    const key = service && options.publicKeys.get(service);
    if (!service || !key) throw new MachineTokenError('unknown service');
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['EdDSA'],
      issuer: issuerOf(service),
      currentDate: options.now,
      requiredClaims: ['iss', 'iat', 'exp', 'jti', 'method', 'path', 'bodyHash'],
      maxTokenAge: MACHINE_TOKEN_LIFETIME_S,
    });
    if (typeof payload.jti !== 'string' || !payload.jti) throw new MachineTokenError('invalid token');
    if (payload.method !== options.method.toUpperCase() || payload.path !== options.path) {
      throw new MachineTokenError('the token was made for another route');
    }
    if (payload.bodyHash !== payloadHash(options.body)) throw new MachineTokenError('the request body is not the one the token was made for');
    return { service, jti: payload.jti, exp: payload.exp! };
  } catch (error) {
    if (error instanceof MachineTokenError) throw error;
    if (error instanceof errors.JOSEError) throw new MachineTokenError(error.code === 'ERR_JWT_EXPIRED' ? 'expired' : 'invalid token');
    throw new MachineTokenError('invalid token');
  }
}

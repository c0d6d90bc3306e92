import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

// A refresh token: the session's id (base64url, 22 characters), a dot, and 32 random bytes.
// Naming the session lets a refresh ask the session's limit and the session before it reads the
// token's row, and spend the token in the same statement that reads it.
export function namedToken(sessionId: string): string {
  return `${Buffer.from(sessionId.replaceAll('-', ''), 'hex').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
}

const NAMED_TOKEN = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;

export function sessionNamedBy(token: string): string | undefined {
  if (!NAMED_TOKEN.test(token)) return undefined;
  const hex = Buffer.from(token.slice(0, 22), 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// The successor is drawn at random and kept in the spent token's row under AES-256-GCM, with a
// key only the spent token (and KEY_ENCRYPTION_SECRET, when set) gives: whoever presents the spent
// token within the grace window gets the same successor, and the table alone opens none.
function sealingKey(spentToken: string, pepper: string): Buffer {
  return createHmac('sha256', `refresh-successor:${pepper}`).update(spentToken).digest();
}

export function sealSuccessor(spentToken: string, successor: string, pepper: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(spentToken, pepper), iv);
  const body = Buffer.concat([cipher.update(successor, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

// undefined when it does not open (KEY_ENCRYPTION_SECRET changed since the token was spent, or
// the value is not one sealSuccessor made).
export function openSuccessor(spentToken: string, sealed: string, pepper: string): string | undefined {
  const raw = Buffer.from(sealed, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(spentToken, pepper), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

// A token is kept by its hash only.
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

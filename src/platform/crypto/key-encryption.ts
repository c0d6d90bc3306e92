import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { ConfigError } from '../config/env.js';

const PREFIX = 'enc:v1:';

// Secrets at rest (private signing keys, authenticator-app secrets): AES-256-GCM under a key
// derived from KEY_ENCRYPTION_SECRET, one derivation per purpose (`salt`), so a value sealed
// for one purpose does not open as another. Without the secret values are stored as given.
export class KeyEncryption {
  private readonly key?: Buffer;

  // `what` names the stored values in the errors an operator reads.
  constructor(
    secret: string | undefined,
    private readonly purpose: { salt: string; what: string } = { salt: 'svc-signing-keys', what: 'the signing keys' },
  ) {
    if (secret) this.key = scryptSync(secret, purpose.salt, 32);
  }

  get encrypts(): boolean {
    return !!this.key;
  }

  seal(plain: string): string {
    if (!this.key) return plain;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.key) throw new ConfigError([`KEY_ENCRYPTION_SECRET is required: ${this.purpose.what} in the database are encrypted`]);
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new ConfigError([`KEY_ENCRYPTION_SECRET does not decrypt ${this.purpose.what} in the database`]);
    }
  }
}

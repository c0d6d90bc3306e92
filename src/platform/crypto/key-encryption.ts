import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { ConfigError } from '../config/env.js';

const PREFIX = 'enc:v1:';

// Secrets at rest (private signing keys, authenticator-app secrets): AES-256-GCM under a key
// derived from KEY_ENCRYPTION_SECRET, one derivation per purpose (`salt`), so a value sealed
// for one purpose does not open as another. Without the secret values are stored as given.
// During a rotation KEY_ENCRYPTION_SECRET_PREVIOUS opens what the replaced secret sealed; new
// seals always use the current one, and `stale` tells what to seal again.
export class KeyEncryption {
  private readonly key?: Buffer;
  private readonly previous: Buffer[];

  // `what` names the stored values in the errors an operator reads. `previousSecrets`:
  // KEY_ENCRYPTION_SECRET_PREVIOUS, the earlier secrets separated by commas.
  constructor(
    secret: string | undefined,
    private readonly purpose: { salt: string; what: string } = { salt: 'svc-signing-keys', what: 'the signing keys' },
    previousSecrets?: string,
  ) {
    if (secret) this.key = scryptSync(secret, purpose.salt, 32);
    this.previous = (previousSecrets?.split(',') ?? []).map((s) => scryptSync(s, purpose.salt, 32));
  }

  get encrypts(): boolean {
    return !!this.key;
  }

  // Whether a rotation is under way: values sealed with the previous secret may remain.
  get rotating(): boolean {
    return this.previous.length > 0;
  }

  seal(plain: string): string {
    if (!this.key) return plain;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  // A ConfigError when no secret configured opens it: the operator's to fix, never the caller's.
  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.key) throw new ConfigError([`KEY_ENCRYPTION_SECRET is required: ${this.purpose.what} in the database are encrypted`]);
    for (const key of [this.key, ...this.previous]) {
      const opened = this.openWith(key, stored);
      if (opened !== undefined) return opened;
    }
    throw new ConfigError([`KEY_ENCRYPTION_SECRET${this.rotating ? ' (nor KEY_ENCRYPTION_SECRET_PREVIOUS)' : ''} does not decrypt ${this.purpose.what} in the database`]);
  }

  // Sealed with an earlier secret (it opens with that one only): to seal again.
  stale(stored: string): boolean {
    if (!this.key || !this.rotating || !stored.startsWith(PREFIX) || this.openWith(this.key, stored) !== undefined) return false;
    return this.previous.some((key) => this.openWith(key, stored) !== undefined);
  }

  private openWith(key: Buffer, stored: string): string | undefined {
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

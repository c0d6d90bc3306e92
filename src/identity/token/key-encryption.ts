import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { ConfigError } from '../../platform/config/env.js';

const PREFIX = 'enc:v1:';

// Private signing keys at rest: AES-256-GCM under a key derived from KEY_ENCRYPTION_SECRET.
export class KeyEncryption {
  private readonly key?: Buffer;

  constructor(secret: string | undefined) {
    if (secret) this.key = scryptSync(secret, 'svc-signing-keys', 32);
  }

  seal(pem: string): string {
    if (!this.key) return pem;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.key) throw new ConfigError(['KEY_ENCRYPTION_SECRET is required: the signing keys in the database are encrypted']);
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new ConfigError(['KEY_ENCRYPTION_SECRET does not decrypt the signing keys in the database']);
    }
  }
}

import { createPrivateKey, createPublicKey, generateKeyPair, randomUUID, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Clock, DAY_MS } from '../../platform/clock/clock.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Transactions } from '../../platform/database/transactions.js';
import { KeyEncryption } from '../../platform/crypto/key-encryption.js';
import type { SigningKeyEntity } from './signing-key.entity.js';
import { SigningKeyRepository } from './signing-key.repository.js';
import { SigningKeySection } from './signing-key.settings.js';
import { SessionSection } from '../session/session.settings.js';

const generateRsa = promisify(generateKeyPair);
const KEY_LOCK = 7_311_003;

// The PEM texts are what is published; the KeyObjects, parsed once per key, are what signs and
// verifies (parsing a PEM on every request was the largest single cost of a verification).
export interface SigningKey {
  kid: string;
  privateKey: string;
  privateKeyObject: KeyObject;
  publicKey: string;
  signUntil: Date;
}

export interface VerificationKey {
  kid: string;
  publicKey: string;
  publicKeyObject: KeyObject;
  verifyUntil: Date;
}

function verificationKey(row: Pick<SigningKeyEntity, 'id' | 'publicKey' | 'verifyUntil'>): VerificationKey {
  return { kid: row.id, publicKey: row.publicKey, publicKeyObject: createPublicKey(row.publicKey), verifyUntil: row.verifyUntil };
}

// Signing keys live in the database, shared by every replica. A key signs for
// `keyRefreshPeriodInDays`, then verifies what it signed for one more token lifetime.
@Injectable()
export class KeyService implements OnApplicationBootstrap {
  private readonly logger = new Logger('KeyService');
  private readonly encryption: KeyEncryption;
  private signing?: SigningKey;
  private pending?: Promise<SigningKey>;
  private readonly verifying = new Map<string, VerificationKey>();

  constructor(
    private readonly keys: SigningKeyRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    this.encryption = new KeyEncryption(config.env.KEY_ENCRYPTION_SECRET, undefined, config.env.KEY_ENCRYPTION_SECRET_PREVIOUS);
  }

  // During a KEY_ENCRYPTION_SECRET rotation, the keys the previous secret sealed are sealed again
  // under the current one (a conditional update: replicas starting together each do it once).
  async onApplicationBootstrap(): Promise<void> {
    if (!this.encryption.rotating) return;
    let resealed = 0;
    for (const row of await this.keys.verifyingAt(this.clock.now())) {
      if (!this.encryption.stale(row.privateKey)) continue;
      if (await this.keys.reseal(row.id, row.privateKey, this.encryption.seal(this.encryption.open(row.privateKey)))) resealed++;
    }
    if (resealed) this.logger.log({ resealed }, 'signing keys sealed again under the current KEY_ENCRYPTION_SECRET');
  }

  async signingKey(): Promise<SigningKey> {
    if (this.signing && this.signing.signUntil > this.clock.now()) return this.signing;
    // One load per replica at a time, however many logins arrive together.
    this.pending ??= this.loadOrCreate().finally(() => (this.pending = undefined));
    this.signing = await this.pending;
    return this.signing;
  }

  // A key that may still verify tokens: from memory, or from the database when another replica
  // created it. Dead keys are refused.
  async verificationKey(kid: string): Promise<VerificationKey | undefined> {
    let key = this.verifying.get(kid);
    if (!key) {
      const row = await this.keys.findById(kid);
      if (!row) return undefined;
      key = verificationKey(row);
      this.verifying.set(kid, key);
    }
    return key.verifyUntil > this.clock.now() ? key : undefined;
  }

  // Whether a key this process has already read still verifies (false once its time is over).
  stillVerifies(kid: string): boolean | undefined {
    const key = this.verifying.get(kid);
    return key && key.verifyUntil > this.clock.now();
  }

  // Every key that still verifies, newest first (the JWKS).
  async verificationKeys(): Promise<VerificationKey[]> {
    await this.signingKey(); // there is always a current key to publish
    const rows = await this.keys.verifyingAt(this.clock.now());
    return rows.map((r) => this.verifying.get(r.id) ?? verificationKey(r));
  }

  // The keys of the JWKS with their private halves, the signing key first: for a signer that
  // publishes and signs with the same set (the OpenID Connect provider). Never logged.
  async privateKeySet(): Promise<{ kid: string; privateKey: KeyObject }[]> {
    const signing = await this.signingKey();
    const rows = await this.keys.verifyingAt(this.clock.now());
    const others: { kid: string; privateKey: KeyObject }[] = [];
    for (const row of rows) {
      if (row.id === signing.kid) continue;
      try {
        others.push({ kid: row.id, privateKey: createPrivateKey(this.encryption.open(row.privateKey)) });
      } catch {
        // Sealed under a secret this process does not hold: it signs nothing here, and its public
        // half stays in the service's own JWKS.
        this.logger.warn({ kid: row.id }, 'a verifying key could not be opened: left out of the provider key set');
      }
    }
    return [{ kid: signing.kid, privateKey: signing.privateKeyObject }, ...others];
  }

  private async loadOrCreate(): Promise<SigningKey> {
    const existing = await this.keys.newestSigningAt(this.clock.now());
    if (existing) return this.toSigningKey(existing);

    // Generated outside the lock (it takes a while); dropped if another replica wins.
    const { publicKey, privateKey } = await generateRsa('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const row = await this.transactions.exclusive(KEY_LOCK, async (tx) => {
      const now = this.clock.now();
      const raced = await this.keys.newestSigningAt(now, tx);
      if (raced) return raced;
      const { keyRefreshPeriodInDays } = this.config.section(SigningKeySection);
      const { tokenPeriodInDays } = this.config.section(SessionSection);
      const signUntil = new Date(now.getTime() + keyRefreshPeriodInDays * DAY_MS);
      return this.keys.insert(
        {
          id: randomUUID(),
          publicKey,
          privateKey: this.encryption.seal(privateKey),
          createdAt: now,
          signUntil,
          verifyUntil: new Date(signUntil.getTime() + tokenPeriodInDays * DAY_MS),
        },
        tx,
      );
    });
    return this.toSigningKey(row);
  }

  private toSigningKey(row: SigningKeyEntity): SigningKey {
    this.verifying.set(row.id, verificationKey(row));
    const privateKey = this.encryption.open(row.privateKey);
    return { kid: row.id, publicKey: row.publicKey, privateKey, privateKeyObject: createPrivateKey(privateKey), signUntil: row.signUntil };
  }
}

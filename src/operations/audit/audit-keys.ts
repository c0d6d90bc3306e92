import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

// A key of the audit chain: its id (written with each entry it keys), the key, and whether it is
// the development key, which anyone can derive (no KEY_ENCRYPTION_SECRET).
export interface ChainKey {
  id: string;
  key: KeyObject;
  development: boolean;
}

// A derivation of its own: the chain's key opens nothing else, and nothing else's opens it.
// HKDF rather than KeyEncryption's scrypt: the secret already keys plain HMACs of guessable
// inputs (a failed login's identifierHash), so a slow derivation here would not slow a guess at
// it, and a boot pays no 50 ms or more per key.
const SALT = 'svc-audit-chain';
// Without KEY_ENCRYPTION_SECRET: a fixed key, so that a development chain still links and checks;
// it proves nothing against someone who can write to the database (the boot says so).
const DEVELOPMENT_SECRET = 'svc-audit-chain-development-key';

function chainKey(secret: string): ChainKey {
  const raw = Buffer.from(hkdfSync('sha256', secret, SALT, 'audit-chain-hmac', 32));
  // Names the key in each entry without revealing it: entries then say which secret they need.
  const id = createHmac('sha256', raw).update('audit-chain-key-id').digest('hex').slice(0, 16);
  return { id, key: createSecretKey(raw), development: secret === DEVELOPMENT_SECRET };
}

// The key new entries are written with (from KEY_ENCRYPTION_SECRET) and every key the check
// knows: the earlier secrets (KEY_ENCRYPTION_SECRET_PREVIOUS) and the development key. None of
// them is ever stored in the database.
export class AuditChainKeys {
  readonly current: ChainKey;
  private readonly byId = new Map<string, ChainKey>();

  constructor(secret: string | undefined, previous: readonly string[] = []) {
    this.current = chainKey(secret ?? DEVELOPMENT_SECRET);
    for (const key of [this.current, ...previous.map(chainKey), chainKey(DEVELOPMENT_SECRET)]) if (!this.byId.has(key.id)) this.byId.set(key.id, key);
  }

  static fromEnv(env: { KEY_ENCRYPTION_SECRET?: string; KEY_ENCRYPTION_SECRET_PREVIOUS?: string }): AuditChainKeys {
    return new AuditChainKeys(env.KEY_ENCRYPTION_SECRET, env.KEY_ENCRYPTION_SECRET_PREVIOUS?.split(',') ?? []);
  }

  get(id: string): ChainKey | undefined {
    return this.byId.get(id);
  }
}

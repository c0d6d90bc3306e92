import { createHmac, createSecretKey, scryptSync, type KeyObject } from 'node:crypto';

// A key of the audit chain: its id (written with each entry it keys), the key, and whether it is
// the development key, which anyone can derive (no KEY_ENCRYPTION_SECRET).
export interface ChainKey {
  id: string;
  key: KeyObject;
  development: boolean;
}

// One derivation per purpose, as KeyEncryption's: the chain's key opens nothing else.
const SALT = 'svc-audit-chain';
// Without KEY_ENCRYPTION_SECRET: a fixed key, so that a development chain still links and checks;
// it proves nothing against someone who can write to the database (the boot says so).
const DEVELOPMENT_SECRET = 'svc-audit-chain-development-key';

// scrypt takes tens of milliseconds: once per secret and process.
const derived = new Map<string, ChainKey>();

function chainKey(secret: string): ChainKey {
  let key = derived.get(secret);
  if (!key) {
    const raw = scryptSync(secret, SALT, 32);
    // Names the key in each entry without revealing it: entries then say which secret they need.
    const id = createHmac('sha256', raw).update('audit-chain-key-id').digest('hex').slice(0, 16);
    key = { id, key: createSecretKey(raw), development: secret === DEVELOPMENT_SECRET };
    derived.set(secret, key);
  }
  return key;
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

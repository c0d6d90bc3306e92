import { generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import { describe, expect, it, jest } from '@jest/globals';
import type { PinoLogger } from 'nestjs-pino';
import type { KeyService } from '../../identity/signing-key/key.service.js';
import type { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { ManualClock } from '../../platform/clock/clock.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { chainHash, keyedChainHash } from './audit-chain.js';
import { AuditCheckpointService } from './audit-checkpoint.service.js';
import { AuditChainKeys } from './audit-keys.js';
import { AuditPublisherService } from './audit-publisher.service.js';
import { AuditRecorderService } from './audit-recorder.service.js';
import { AuditRetentionService } from './audit-retention.service.js';
import { AuditVerificationService } from './audit-verification.service.js';
import type { AuditCheckpointEntity, AuditEntryEntity } from './audit.entity.js';
import type { AuditRepository, ChainHead, NewAuditEntry } from './audit.repository.js';

const STORE = '00000000-0000-4000-8000-000000000001';
const SECRET = 'the key encryption secret';
const KEYS = new AuditChainKeys(SECRET);
const SIGNING = generateKeyPairSync('rsa', { modulusLength: 2048 });

// A repository that keeps the chain and its checkpoints in memory, as AuditRepository keys and
// links them, and can be told to refuse the next appends.
class MemoryEntries {
  rows: AuditEntryEntity[] = [];
  checkpointRows: AuditCheckpointEntity[] = [];
  refuse = 0;

  constructor(private readonly keys: AuditChainKeys = KEYS) {}

  async append(storeId: string, entries: NewAuditEntry[]): Promise<AuditEntryEntity[]> {
    if (this.refuse > 0) {
      this.refuse--;
      throw new Error('connection refused');
    }
    return entries.map((e) => {
      const last = this.rows.at(-1);
      const row = { ...e, storeId, seq: String(BigInt(last?.seq ?? '0') + 1n), prevHash: last?.hash ?? null, hash: '', keyId: this.keys.current.id } as AuditEntryEntity;
      row.hash = keyedChainHash(this.keys.current.key, row.prevHash, row);
      this.rows.push(row);
      return row;
    });
  }

  async chainPage(_storeId: string, afterSeq: string, limit: number): Promise<AuditEntryEntity[]> {
    return this.rows.filter((r) => BigInt(r.seq) > BigInt(afterSeq)).slice(0, limit);
  }

  async head(): Promise<ChainHead | undefined> {
    const last = this.rows.at(-1);
    return last && { seq: last.seq, hash: last.hash, at: last.at, anchored: this.checkpointRows.some((c) => c.seq === last.seq) };
  }

  async addCheckpoint(c: AuditCheckpointEntity): Promise<boolean> {
    if (this.checkpointRows.some((k) => k.seq === c.seq)) return false;
    this.checkpointRows.push(c);
    return true;
  }

  async checkpoints(_storeId: string, since: Date, limit: number, matching = false): Promise<AuditCheckpointEntity[]> {
    return this.checkpointRows
      .filter((c) => c.at >= since && (!matching || this.rows.some((r) => r.seq === c.seq && r.hash === c.hash)))
      .sort((a, b) => Number(BigInt(b.seq) - BigInt(a.seq)))
      .slice(0, limit);
  }

  async hashAt(_storeId: string, seq: string): Promise<string | undefined> {
    return this.rows.find((r) => r.seq === seq)?.hash;
  }

  // Rewrites the chain from `index` on as whoever has the table but not the key would: every
  // later hash recomputed, unkeyed or under a key of its own.
  rehash(index: number, key?: AuditChainKeys): void {
    for (let i = index; i < this.rows.length; i++) {
      const row = this.rows[i];
      row.prevHash = this.rows[i - 1]?.hash ?? null;
      row.keyId = key ? key.current.id : null;
      row.hash = key ? keyedChainHash(key.current.key, row.prevHash, row) : chainHash(row.prevHash, row);
    }
  }
}

function service(entries: MemoryEntries, keys: AuditChainKeys = KEYS) {
  const logger = { setContext: jest.fn(), warn: jest.fn(), error: jest.fn() };
  const published: string[] = [];
  const events: { topic: string; data: Record<string, unknown> }[] = [];
  const publisher = {
    service: 'svc',
    publish: async (topic: string, data: Record<string, unknown>) => {
      published.push(topic);
      events.push({ topic, data });
    },
  };
  const config = { section: () => ({ auditLog: { enabled: true, retentionDays: 365 } }) };
  const clock = new ManualClock(new Date('2026-11-26T12:00:00Z'));
  const signingKeys = { signingKey: async () => ({ kid: 'signing-key-1', privateKeyObject: SIGNING.privateKey }) };
  const checkpoints = new AuditCheckpointService(entries as unknown as AuditRepository, keys, signingKeys as unknown as KeyService, publisher as unknown as EventPublisher, clock, logger as unknown as PinoLogger);
  const audit = new AuditRecorderService(entries as unknown as AuditRepository, keys, checkpoints, new AuditPublisherService(publisher as unknown as EventPublisher, logger as unknown as PinoLogger), clock, config as unknown as AppConfig, logger as unknown as PinoLogger);
  const retention = new AuditRetentionService(entries as unknown as AuditRepository, clock, config as unknown as AppConfig, logger as unknown as PinoLogger);
  const chain = new AuditVerificationService(entries as unknown as AuditRepository, keys, checkpoints, retention);
  return { audit, chain, checkpoints, clock, logger, published, events };
}

const failedLogin = { storeId: STORE, action: 'user.login.failed', outcome: 'failure', reason: 'wrong_password', actor: { type: 'anonymous', id: null } } as const;
const SOUND = { firstBrokenId: null, firstBrokenReason: null, truncated: false, truncatedAfter: null };

async function written(count: number, entries = new MemoryEntries(), keys = KEYS) {
  const s = service(entries, keys);
  const write = async (n: number) => {
    for (let i = 0; i < n; i++) await s.audit.record({ ...failedLogin, details: { attempt: i } });
    await s.audit.flush();
  };
  await write(count);
  return { ...s, entries, write };
}

describe('the audit chain', () => {
  it('links each entry to the one before, keyed, and the check finds the first entry changed afterwards', async () => {
    const entries = new MemoryEntries();
    const { audit, chain } = service(entries);
    for (let i = 0; i < 5; i++) await audit.record({ ...failedLogin, details: { attempt: i, nested: { b: 1, a: [i] } } });
    await audit.flush();
    expect(entries.rows.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5']);
    expect(entries.rows[0].prevHash).toBeNull();
    expect(entries.rows[3].prevHash).toBe(entries.rows[2].hash);
    expect(entries.rows.every((r) => r.keyId === KEYS.current.id)).toBe(true);
    expect(await chain.verify(STORE)).toMatchObject({ ...SOUND, verified: 5 });

    entries.rows[2].reason = 'unknown_user';
    expect(await chain.verify(STORE)).toMatchObject({ verified: 2, firstBrokenId: entries.rows[2].id, firstBrokenReason: 'edited' });
  });

  it('an entry edited and every later hash recomputed without the key (SHA-256, or HMAC under a guessed key) is named', async () => {
    const { chain, entries } = await written(6);
    entries.rows[3].reason = 'unknown_user';
    entries.rehash(3);
    // Each link holds: only the key tells.
    expect(entries.rows[4].prevHash).toBe(entries.rows[3].hash);
    expect(await chain.verify(STORE)).toMatchObject({ verified: 3, firstBrokenId: entries.rows[3].id, firstBrokenReason: 'downgraded' });
    entries.rehash(3, new AuditChainKeys('a guess at the secret'));
    expect(await chain.verify(STORE)).toMatchObject({ verified: 3, firstBrokenId: entries.rows[3].id, firstBrokenReason: 'unknownKey' });
    // Under the key id of the real key, the HMAC of a guessed one does not match.
    const guessed = new AuditChainKeys('a guess at the secret');
    entries.rows[3].hash = keyedChainHash(guessed.current.key, entries.rows[3].prevHash, { ...entries.rows[3] });
    entries.rows[3].keyId = KEYS.current.id;
    expect(await chain.verify(STORE)).toMatchObject({ verified: 3, firstBrokenId: entries.rows[3].id, firstBrokenReason: 'edited' });
  });

  it('entries written before the chain was keyed (SHA-256, no keyId) still verify, and the keyed ones after them', async () => {
    const { audit, chain, entries } = await written(3);
    // As the earlier release wrote them.
    entries.rehash(0);
    expect(entries.rows.every((r) => r.keyId === null)).toBe(true);
    await audit.record(failedLogin);
    await audit.flush();
    expect(entries.rows[3].keyId).toBe(KEYS.current.id);
    expect(await chain.verify(STORE)).toMatchObject({ ...SOUND, verified: 4 });
    // An unkeyed one after a keyed one is not taken: all that follows could be rewritten so.
    entries.rows.push({ ...entries.rows[3], id: 'after', seq: '5', prevHash: entries.rows[3].hash, keyId: null, hash: '' });
    entries.rows[4].hash = chainHash(entries.rows[4].prevHash, entries.rows[4]);
    expect(await chain.verify(STORE)).toMatchObject({ verified: 4, firstBrokenId: 'after', firstBrokenReason: 'downgraded' });
  });

  it('an earlier KEY_ENCRYPTION_SECRET keeps its entries verifying; without it they name the key unknown', async () => {
    const entries = new MemoryEntries(new AuditChainKeys('the secret before this one'));
    await written(2, entries, new AuditChainKeys('the secret before this one'));
    const rotated = AuditChainKeys.fromEnv({ KEY_ENCRYPTION_SECRET: SECRET, KEY_ENCRYPTION_SECRET_PREVIOUS: 'the secret before this one,an even older secret' });
    const later = new MemoryEntries(rotated);
    later.rows = entries.rows;
    const { audit, chain } = service(later, rotated);
    await audit.record(failedLogin);
    await audit.flush();
    expect(later.rows.map((r) => r.keyId)).toEqual([entries.rows[0].keyId, entries.rows[0].keyId, rotated.current.id]);
    expect(rotated.current.id).not.toBe(entries.rows[0].keyId);
    expect(await chain.verify(STORE)).toMatchObject({ ...SOUND, verified: 3 });
    expect(await service(later, KEYS).chain.verify(STORE)).toMatchObject({ verified: 0, firstBrokenId: later.rows[0].id, firstBrokenReason: 'unknownKey' });
  });

  it('the development key (no KEY_ENCRYPTION_SECRET) after a secret\'s key is a downgrade; before it, it verifies', async () => {
    const development = new AuditChainKeys(undefined);
    expect(development.current.development).toBe(true);
    const entries = new MemoryEntries(development);
    await written(2, entries, development);
    const secret = new MemoryEntries(KEYS);
    secret.rows = entries.rows;
    const { chain } = await written(1, secret, KEYS);
    expect(await chain.verify(STORE)).toMatchObject({ ...SOUND, verified: 3 });
    await written(1, entries, development);
    expect(await chain.verify(STORE)).toMatchObject({ verified: 3, firstBrokenId: entries.rows[3].id, firstBrokenReason: 'downgraded' });
  });

  it('hashes details the same whatever the order of their keys (jsonb reorders them)', () => {
    const base = { id: 'e', storeId: STORE, seq: '1', at: new Date(0), action: 'a', outcome: 'success', reason: null, actorType: 'system', actorId: null, actorRoleId: null, targetType: null, targetId: null, ip: null, userAgent: null, requestId: null, sessionId: null };
    const one = chainHash(null, { ...base, details: { b: 1, a: { y: 2, x: 1 } } });
    const two = chainHash(null, { ...base, details: { a: { x: 1, y: 2 }, b: 1 } });
    expect(one).toBe(two);
    expect(chainHash('prev', { ...base, details: null })).not.toBe(chainHash(null, { ...base, details: null }));
    expect(keyedChainHash(KEYS.current.key, null, { ...base, details: { b: 1, a: { y: 2, x: 1 } } })).toBe(keyedChainHash(KEYS.current.key, null, { ...base, details: { a: { x: 1, y: 2 }, b: 1 } }));
  });

  it('hashes as the chains already stored do (a fixed entry, its digest from the first release of the chain)', () => {
    const entry = { id: 'e', storeId: STORE, seq: '12', at: new Date(0), action: 'user.login.succeeded', outcome: 'success', reason: null, actorType: 'user', actorId: 'u"1', actorRoleId: null, targetType: 'user', targetId: 'é', ip: null, userAgent: null, requestId: null, sessionId: null, details: { b: 1, a: [1, 'x'] } };
    expect(chainHash('ab'.repeat(32), entry)).toBe('7b3ed62bfdf03be3c75921570ffd5991785c31b9ee4e4f003a910753e136e127');
  });

  it('a removed entry breaks the chain at the one after it', async () => {
    const { chain, entries } = await written(4);
    const after = entries.rows[2];
    entries.rows.splice(1, 1);
    expect(await chain.verify(STORE)).toMatchObject({ verified: 1, firstBrokenId: after.id, firstBrokenReason: 'unlinked' });
  });
});

describe('the chain key', () => {
  it('without KEY_ENCRYPTION_SECRET is the development key, and the boot says what that leaves open', () => {
    for (const [keys, warned] of [[new AuditChainKeys(undefined), true], [KEYS, false]] as const) {
      const { audit, checkpoints, logger } = service(new MemoryEntries(keys), keys);
      audit.onApplicationBootstrap();
      checkpoints.onApplicationBootstrap();
      void audit.beforeApplicationShutdown();
      checkpoints.beforeApplicationShutdown();
      expect(logger.warn.mock.calls.some(([message]) => String(message).includes('KEY_ENCRYPTION_SECRET is not set'))).toBe(warned);
    }
  });

  it('is derived from the secret, named by an id that is not the key, and the same for the same secret', () => {
    const again = new AuditChainKeys(SECRET);
    expect(again.current.id).toBe(KEYS.current.id);
    expect(KEYS.current.id).toMatch(/^[0-9a-f]{16}$/);
    expect(new AuditChainKeys('another secret value').current.id).not.toBe(KEYS.current.id);
    expect(KEYS.current.key.export().toString('hex')).not.toContain(KEYS.current.id);
  });
});

describe('checkpoints', () => {
  it('anchor the newest entry: removing it, or more, shows as truncated, after the newest checkpoint still matched', async () => {
    const { chain, checkpoints, entries, write } = await written(3);
    await checkpoints.run();
    await write(2);
    await checkpoints.run();
    expect(entries.checkpointRows.map((c) => c.seq)).toEqual(['3', '5']);
    expect(await chain.verify(STORE)).toMatchObject({ ...SOUND, verified: 5, checkpoint: { seq: '5', hash: entries.rows[4].hash } });

    entries.rows.pop();
    // The chain alone still holds: only the checkpoint tells.
    expect(await chain.verify(STORE)).toMatchObject({ verified: 4, firstBrokenId: null, truncated: true, truncatedAfter: '3', checkpoint: { seq: '5' } });
    // Entries appended after the removal chain soundly, and the checkpoint still tells.
    await write(2);
    expect(await chain.verify(STORE)).toMatchObject({ verified: 6, firstBrokenId: null, truncated: true, truncatedAfter: '3' });
  });

  it('one not made under a chain key (forged or edited in the table) is passed over', async () => {
    const { chain, checkpoints, entries } = await written(2);
    await checkpoints.run();
    const forged = { ...entries.checkpointRows[0], seq: '9', hash: 'f'.repeat(64) };
    entries.checkpointRows.push(forged);
    expect(await chain.verify(STORE)).toMatchObject({ ...SOUND, checkpoint: { seq: '2' } });
  });

  it('are made once per store written since the last one, or at once after 1,000 entries', async () => {
    const { checkpoints, entries, write } = await written(2);
    await checkpoints.run();
    await checkpoints.run();
    expect(entries.checkpointRows).toHaveLength(1);
    await write(999);
    await checkpoints.run([]);
    expect(entries.checkpointRows).toHaveLength(1);
    await write(1);
    await checkpoints.run([]);
    expect(entries.checkpointRows.map((c) => c.seq)).toEqual(['2', '1002']);
  });

  it('of one entry by two replicas at once: one is kept and published', async () => {
    const { checkpoints, entries, events } = await written(1);
    const other = service(entries);
    other.checkpoints.note(STORE, 1);
    await Promise.all([checkpoints.run(), other.checkpoints.run()]);
    expect(entries.checkpointRows).toHaveLength(1);
    expect([...events, ...other.events].filter((e) => e.topic === 'svc-audit-checkpoint')).toHaveLength(1);
  });

  it('are signed with the signing key as a JWS of their fields, and published', async () => {
    const { checkpoints, events } = await written(1);
    await checkpoints.run();
    const event = events.find((e) => e.topic === 'svc-audit-checkpoint')!;
    const published = event.data as { storeId: string; checkpoint: { seq: string; hash: string; at: string; signature: string } };
    expect(published.storeId).toBe(STORE);
    const [header, payload, signature] = published.checkpoint.signature.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'audit-checkpoint', kid: 'signing-key-1' });
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ storeId: STORE, seq: '1', hash: published.checkpoint.hash, at: published.checkpoint.at });
    expect(verifySignature('sha256', Buffer.from(`${header}.${payload}`), SIGNING.publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
  });
});

describe('queued entries', () => {
  it('are kept and written with a later flush when the database refuses a batch, in their order', async () => {
    const entries = new MemoryEntries();
    const { audit, logger, published } = service(entries);
    entries.refuse = 1;
    await audit.record({ ...failedLogin, details: { n: 1 } });
    await audit.flush();
    expect(entries.rows).toHaveLength(0);
    expect(logger.warn).toHaveBeenCalled();

    await audit.record({ ...failedLogin, details: { n: 2 } });
    await audit.flush();
    expect(entries.rows.map((r) => r.details)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(published).toEqual(['svc-audit-user-login-failed', 'svc-audit-user-login-failed']);
    expect(logger.error).not.toHaveBeenCalled();
    await audit.onApplicationShutdown();
  });

  it('a shutdown with entries the database still refuses says how many were lost', async () => {
    const entries = new MemoryEntries();
    const { audit, logger } = service(entries);
    entries.refuse = 10;
    await audit.record(failedLogin);
    await audit.record(failedLogin);
    await audit.beforeApplicationShutdown();
    await audit.onApplicationShutdown();
    expect(logger.error).toHaveBeenCalledWith({ lost: 2 }, expect.stringMatching(/lost at shutdown/));
  });
});

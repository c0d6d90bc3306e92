import { describe, expect, it, jest } from '@jest/globals';
import type { PinoLogger } from 'nestjs-pino';
import type { EventPublisher } from '../../messaging/broker/event-publisher.js';
import { ManualClock } from '../../platform/clock/clock.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { chainHash } from './audit-chain.js';
import type { AuditEntryEntity } from './audit.entity.js';
import type { AuditRepository, NewAuditEntry } from './audit.repository.js';
import { AuditService } from './audit.service.js';

const STORE = '00000000-0000-4000-8000-000000000001';

// A repository that keeps the chain in memory, and can be told to refuse the next appends.
class MemoryEntries {
  rows: AuditEntryEntity[] = [];
  refuse = 0;

  async append(storeId: string, entries: NewAuditEntry[]): Promise<AuditEntryEntity[]> {
    if (this.refuse > 0) {
      this.refuse--;
      throw new Error('connection refused');
    }
    const written = entries.map((e) => {
      const last = this.rows.at(-1);
      const row = { ...e, storeId, seq: String(this.rows.length + 1), prevHash: last?.hash ?? null, hash: '' } as AuditEntryEntity;
      row.hash = chainHash(row.prevHash, row);
      this.rows.push(row);
      return row;
    });
    return written;
  }

  async chainPage(_storeId: string, afterSeq: string, limit: number): Promise<AuditEntryEntity[]> {
    return this.rows.filter((r) => BigInt(r.seq) > BigInt(afterSeq)).slice(0, limit);
  }
}

function service(entries: MemoryEntries) {
  const logger = { setContext: jest.fn(), warn: jest.fn(), error: jest.fn() };
  const published: string[] = [];
  const publisher = { service: 'svc', publish: async (topic: string) => void published.push(topic) };
  const config = { settings: { auditLog: { enabled: true, retentionDays: 365 } } };
  const audit = new AuditService(entries as unknown as AuditRepository, new ManualClock(new Date('2026-11-26T12:00:00Z')), config as unknown as AppConfig, publisher as unknown as EventPublisher, logger as unknown as PinoLogger);
  return { audit, logger, published };
}

const failedLogin = { storeId: STORE, action: 'user.login.failed', outcome: 'failure', reason: 'wrong_password', actor: { type: 'anonymous', id: null } } as const;

describe('the audit chain', () => {
  it('links each entry to the one before, and the check finds the first entry changed afterwards', async () => {
    const entries = new MemoryEntries();
    const { audit } = service(entries);
    for (let i = 0; i < 5; i++) await audit.record({ ...failedLogin, details: { attempt: i, nested: { b: 1, a: [i] } } });
    await audit.flush();
    expect(entries.rows.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5']);
    expect(entries.rows[0].prevHash).toBeNull();
    expect(entries.rows[3].prevHash).toBe(entries.rows[2].hash);
    expect(await audit.verify(STORE)).toEqual({ verified: 5, firstBrokenId: null });

    entries.rows[2].reason = 'unknown_user';
    expect(await audit.verify(STORE)).toEqual({ verified: 2, firstBrokenId: entries.rows[2].id });
  });

  it('hashes details the same whatever the order of their keys (jsonb reorders them)', () => {
    const base = { id: 'e', storeId: STORE, seq: '1', at: new Date(0), action: 'a', outcome: 'success', reason: null, actorType: 'system', actorId: null, actorRoleId: null, targetType: null, targetId: null, ip: null, userAgent: null, requestId: null, sessionId: null };
    const one = chainHash(null, { ...base, details: { b: 1, a: { y: 2, x: 1 } } });
    const two = chainHash(null, { ...base, details: { a: { x: 1, y: 2 }, b: 1 } });
    expect(one).toBe(two);
    expect(chainHash('prev', { ...base, details: null })).not.toBe(chainHash(null, { ...base, details: null }));
  });

  it('hashes as the chains already stored do (a fixed entry, its digest from the first release of the chain)', () => {
    const entry = { id: 'e', storeId: STORE, seq: '12', at: new Date(0), action: 'user.login.succeeded', outcome: 'success', reason: null, actorType: 'user', actorId: 'u"1', actorRoleId: null, targetType: 'user', targetId: 'é', ip: null, userAgent: null, requestId: null, sessionId: null, details: { b: 1, a: [1, 'x'] } };
    expect(chainHash('ab'.repeat(32), entry)).toBe('7b3ed62bfdf03be3c75921570ffd5991785c31b9ee4e4f003a910753e136e127');
  });

  it('a removed entry breaks the chain at the one after it', async () => {
    const entries = new MemoryEntries();
    const { audit } = service(entries);
    for (let i = 0; i < 4; i++) await audit.record(failedLogin);
    await audit.flush();
    const after = entries.rows[2];
    entries.rows.splice(1, 1);
    expect(await audit.verify(STORE)).toEqual({ verified: 1, firstBrokenId: after.id });
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

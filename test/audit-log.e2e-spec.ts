import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { AUDIT_ACTIONS } from '../src/kernel/audit.js';
import { DataSource } from 'typeorm';
import { DAY_MS, ManualClock } from '../src/platform/clock/clock.js';
import { createPublicKey, verify as verifySignature, type JsonWebKeyInput } from 'node:crypto';
import { chainHash } from '../src/operations/audit/audit-chain.js';
import { AuditCheckpointService } from '../src/operations/audit/audit-checkpoint.service.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { AuditRetentionService } from '../src/operations/audit/audit-retention.service.js';
import { EventPublisher } from '../src/delivery/broker/event-publisher.js';
import { describeIf, expectError, waitFor, login, PASSWORD, SUPER_ADMIN, registerStore, startApp, updateStoreRow, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';

// The audit log seen from its readers: what each wired action records (and never a secret), that
// nothing queued is lost at shutdown, the hash chain and its check, retention, the filters and
// keyset pages, one store's entries invisible from another, the export, and who may read.

const LOGS = '/auth-api/v1/auditlogs';
const HEADER = 'svc-store-codename';
const USERS = '/auth-api/users';

// The columns an entry's hash covers, as SQL reads them.
const CHAINED = '"id", "storeId", "seq", "at", "action", "outcome", "reason", "actorType", "actorId", "actorRoleId", "targetType", "targetId", "ip", "userAgent", "requestId", "sessionId", "details", "prevHash", "hash"';
type ChainRow = Parameters<typeof chainHash>[1] & { prevHash: string | null; hash: string };

type Entry = Record<string, unknown> & { id: string; action: string; outcome: string; reason: string | null; actor: { type: string; id: string | null }; target: { type: string; id: string | null } | null };

interface Owner {
  store: RegisteredStore;
  token: string;
}

async function ownerOfNewStore(t: TestApp): Promise<Owner> {
  const store = await registerStore(t.http);
  const { accessToken } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  return { store, token: accessToken };
}

async function addUser(t: TestApp, o: Owner, body: Record<string, unknown> = {}): Promise<{ id: string; email: string }> {
  const email = uniqueEmail();
  const res = await t.http.post(USERS).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).send({ email, password: PASSWORD, fullname: 'Member', ...body }).expect(201);
  return { id: res.body.user.id, email };
}

function failLogin(t: TestApp, codename: string, username: string, password = 'wrong password!') {
  return t.http.post('/auth-api/login').set(HEADER, codename).send({ username, password }).expect(401);
}

// The queue written, then the store's entries (newest first) through the route.
async function entries(t: TestApp, o: Owner, query: Record<string, string | number> = {}): Promise<Entry[]> {
  await t.app.get(AuditRecorderService).flush();
  const res = await t.http.get(LOGS).query({ pageRowCount: 100, ...query }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
  return res.body.auditLogs as Entry[];
}

describe('audit log', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({ clock, settings: { accessTokenMinutes: 5, refreshReuseGraceSeconds: 0 } });
  });
  afterAll(() => t?.close());

  it('logins: success with the session, failures with their reason; never the password or the username', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    // The clock moves between events: the list is newest first by time.
    await failLogin(t, o.store.codename, member.email);
    clock.advance(5);
    await failLogin(t, o.store.codename, 'nobody-here@example.com');
    clock.advance(5);
    const ok = await login(t.http, member.email, PASSWORD, o.store.codename);
    clock.advance(5);
    await t.http.patch(`/auth-api/v1/users/${member.id}`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).send({ isActive: false }).expect(200);
    await t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: member.email, password: PASSWORD }).expect(403);

    const all = await entries(t, o, { action: 'user.login.*' });
    const ofMember = all.filter((e) => e.target?.id === member.id || e.reason === 'unknown_user');
    expect(ofMember.map((e) => [e.action, e.outcome, e.reason]).reverse()).toEqual([
      ['user.login.failed', 'failure', 'wrong_password'],
      ['user.login.failed', 'failure', 'unknown_user'],
      ['user.login.succeeded', 'success', null],
      ['user.login.failed', 'failure', 'inactive'],
    ]);
    const success = ofMember.find((e) => e.outcome === 'success')!;
    expect(success).toMatchObject({ actor: { type: 'user', id: member.id, roleId: 'tenantUser' }, target: { type: 'user', id: member.id }, sessionId: ok.sessionId, storeId: o.store.storeId });
    expect(success.ip).toEqual(expect.any(String));
    expect(success.requestId).toEqual(expect.any(String));
    const unknown = ofMember.find((e) => e.reason === 'unknown_user')!;
    expect(unknown).toMatchObject({ actor: { type: 'anonymous', id: null }, target: null, details: { identifierHash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    const text = JSON.stringify(all);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('wrong password!');
    expect(text).not.toContain(member.email);
    expect(text).not.toContain('nobody-here');
  });

  it('a login to a deactivated store is recorded as store_inactive', async () => {
    const o = await ownerOfNewStore(t);
    await updateStoreRow([t], o.store.storeId, { isActive: false });
    await t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: o.store.ownerEmail, password: PASSWORD });
    await t.app.get(AuditRecorderService).flush();
    const rows: { reason: string }[] = await t.app.get(DataSource).query(`SELECT "reason" FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.login.failed'`, [o.store.storeId]);
    expect(rows.map((r) => r.reason)).toEqual(['store_inactive']);
  });

  it('logout, deactivation and a role change: who did it to whom', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const other = await addUser(t, o);
    const session = await login(t.http, member.email, PASSWORD, o.store.codename);
    await t.http.post('/auth-api/logout').set(HEADER, o.store.codename).set('Authorization', `Bearer ${session.accessToken}`).expect(200);
    await t.http.patch(`/auth-api/v1/users/${member.id}`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).send({ isActive: false }).expect(200);
    await t.http.patch(`/auth-api/v1/users/${other.id}`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).send({ roleId: 'tenantAdmin' }).expect(200);
    const [logout] = await entries(t, o, { action: 'user.logout' });
    expect(logout).toMatchObject({ outcome: 'success', actor: { type: 'user', id: member.id }, target: { type: 'session', id: session.sessionId }, sessionId: session.sessionId });
    const [deactivated] = await entries(t, o, { action: 'user.deactivated' });
    expect(deactivated).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId, roleId: 'tenantOwner' }, target: { type: 'user', id: member.id } });
    const [role] = await entries(t, o, { action: 'user.role.changed' });
    expect(role).toMatchObject({ actor: { id: o.store.ownerId }, target: { type: 'user', id: other.id }, details: { from: ['tenantUser'], to: ['tenantAdmin'] } });
  });

  it('API keys created and deleted, written with the key; never the key or its hash', async () => {
    const o = await ownerOfNewStore(t);
    const created = await t.http.post('/auth-api/v1/apikeys').set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).send({ name: 'nightly export' }).expect(201);
    const { id, key } = created.body.apiKey as { id: string; key: string };
    // In the key's transaction: there before any flush.
    const [row]: { hash: string }[] = await t.app.get(DataSource).query(`SELECT "hash" FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'apikey.created'`, [o.store.storeId]);
    expect(row).toBeDefined();
    clock.advance(5);
    await t.http.delete(`/auth-api/v1/apikeys/${id}`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    const all = await entries(t, o, { targetId: id });
    expect(all.map((e) => e.action)).toEqual(['apikey.deleted', 'apikey.created']);
    expect(all[1]).toMatchObject({ actor: { type: 'user', id: o.store.ownerId }, target: { type: 'apiKey', id }, details: { name: 'nightly export' } });
    const text = JSON.stringify(all);
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(-20));
    const [stored]: { keyHash: string }[] = await t.app.get(DataSource).query('SELECT encode(sha256(convert_to($1, \'UTF8\')), \'hex\') AS "keyHash"', [key]);
    expect(text).not.toContain(stored.keyHash);
  });

  it('a spent refresh token used again: session.refresh.reused', async () => {
    const o = await ownerOfNewStore(t);
    const first = await t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: o.store.ownerEmail, password: PASSWORD }).expect(200);
    const { refreshToken, sessionId } = first.body as { refreshToken: string; sessionId: string };
    await t.http.post('/auth-api/refresh').set(HEADER, o.store.codename).send({ refreshToken }).expect(200);
    clock.advance(1000);
    expectError(await t.http.post('/auth-api/refresh').set(HEADER, o.store.codename).send({ refreshToken }), 401, 'RefreshTokenReused');
    await t.app.get(AuditRecorderService).flush();
    const rows: { outcome: string; targetId: string; sessionId: string }[] = await t.app
      .get(DataSource)
      .query(`SELECT "outcome", "targetId", "sessionId" FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'session.refresh.reused'`, [o.store.storeId]);
    expect(rows).toEqual([{ outcome: 'failure', targetId: sessionId, sessionId }]);
    expect(JSON.stringify(await entries(t, await refreshOwner(t, o)))).not.toContain(refreshToken);
  });

  it('the chain verifies; a row edited with SQL is named', async () => {
    const o = await ownerOfNewStore(t);
    for (let i = 0; i < 5; i++) await failLogin(t, o.store.codename, `x${i}@example.com`);
    await t.app.get(AuditRecorderService).flush();
    const verify = () => t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    const sound = await verify();
    expect(sound.body).toMatchObject({ firstBrokenId: null });
    expect(sound.body.verified).toBeGreaterThanOrEqual(5);
    const chain: { id: string }[] = await t.app.get(DataSource).query('SELECT "id" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq"', [o.store.storeId]);
    const victim = chain[2].id;
    await t.app.get(DataSource).query(`UPDATE "audit_log" SET "reason" = 'wrong_password' WHERE "id" = $1`, [victim]);
    const broken = await verify();
    expect(broken.body).toMatchObject({ verified: 2, firstBrokenId: victim });
  });

  it('an entry edited and every later hash recomputed (SHA-256, all an unkeyed chain needs) is named', async () => {
    const o = await ownerOfNewStore(t);
    for (let i = 0; i < 5; i++) await failLogin(t, o.store.codename, `k${i}@example.com`);
    await t.app.get(AuditRecorderService).flush();
    const db = t.app.get(DataSource);
    const chain: ChainRow[] = await db.query(`SELECT ${CHAINED} FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq"`, [o.store.storeId]);
    const victim = chain.findIndex((row) => row.reason === 'unknown_user');
    chain[victim].reason = 'wrong_password';
    // Whoever can write the table rewrites the rest so that every link holds.
    let prevHash = chain[victim - 1]?.hash ?? null;
    for (const row of chain.slice(victim)) {
      row.prevHash = prevHash;
      row.hash = chainHash(prevHash, { ...row, seq: String(row.seq) });
      prevHash = row.hash;
      await db.query('UPDATE "audit_log" SET "reason" = $2, "prevHash" = $3, "hash" = $4 WHERE "id" = $1', [row.id, row.reason, row.prevHash, row.hash]);
    }
    const res = await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    expect(res.body).toMatchObject({ verified: victim, firstBrokenId: chain[victim].id, firstBrokenReason: 'edited' });
  });

  it('the newest entries removed after a checkpoint: the check says the chain was truncated, and after which checkpoint', async () => {
    // A replica writes, then stops: what it wrote last is anchored as it stops (the store's
    // every entry written there, so that no timer of this file's app anchors it again).
    const writer = await startApp();
    let o: Owner;
    try {
      o = await ownerOfNewStore(writer);
      for (let i = 0; i < 3; i++) await failLogin(writer, o.store.codename, `n${i}@example.com`);
    } finally {
      await writer.close();
    }
    const db = t.app.get(DataSource);
    const verify = async () => (await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200)).body as Record<string, unknown>;
    const [newest]: { id: string; seq: string }[] = await db.query('SELECT "id", "seq" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq" DESC LIMIT 1', [o.store.storeId]);
    const sound = await verify();
    expect(sound).toMatchObject({ firstBrokenId: null, truncated: false, truncatedAfter: null, checkpoint: { seq: newest.seq } });
    await db.query('DELETE FROM "audit_log" WHERE "id" = $1', [newest.id]);
    expect(await verify()).toMatchObject({ verified: Number(newest.seq) - 1, firstBrokenId: null, truncated: true, truncatedAfter: null, checkpoint: { seq: newest.seq } });
  });

  it('entries removed and new ones written after them: the chain holds, the checkpoint still tells', async () => {
    const o = await ownerOfNewStore(t);
    const db = t.app.get(DataSource);
    const audit = t.app.get(AuditRecorderService);
    const checkpoints = t.app.get(AuditCheckpointService);
    await failLogin(t, o.store.codename, 'm0@example.com');
    await audit.flush();
    await checkpoints.run();
    const [first]: { seq: string }[] = await db.query('SELECT max("seq")::text AS "seq" FROM "audit_log" WHERE "storeId" = $1', [o.store.storeId]);
    for (let i = 1; i < 4; i++) await failLogin(t, o.store.codename, `m${i}@example.com`);
    await audit.flush();
    await checkpoints.run();
    const [removed]: { seq: string }[] = await db.query('SELECT max("seq")::text AS "seq" FROM "audit_log" WHERE "storeId" = $1', [o.store.storeId]);
    await db.query('DELETE FROM "audit_log" WHERE "storeId" = $1 AND "seq" > $2', [o.store.storeId, first.seq]);
    await failLogin(t, o.store.codename, 'm9@example.com');
    await audit.flush();
    const res = await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    const body = res.body as { truncatedAfter: string; checkpoint: { seq: string } };
    expect(body).toMatchObject({ firstBrokenId: null, truncated: true, checkpoint: { seq: removed.seq } });
    // The checkpoint before the removal (or, should this app's minute timer have run since, one of
    // the entry written after it: the chain matches that one too).
    expect(BigInt(body.truncatedAfter)).toBeGreaterThanOrEqual(BigInt(first.seq));
    expect(BigInt(body.truncatedAfter)).toBeLessThan(BigInt(removed.seq));
  });

  it('checkpoints are published on the broker, signed: the JWKS verifies them', async () => {
    const o = await ownerOfNewStore(t);
    const publisher = t.app.get(EventPublisher);
    const heard: Record<string, unknown>[] = [];
    const stop = publisher.onPublished((topic, data) => {
      if (topic === `${publisher.service}-audit-checkpoint` && data.storeId === o.store.storeId) heard.push(data);
    });
    try {
      await failLogin(t, o.store.codename, 'cp@example.com');
      await t.app.get(AuditRecorderService).flush();
      await t.app.get(AuditCheckpointService).run();
      const event = await waitFor('the checkpoint event', () => heard[0]);
      const checkpoint = event.checkpoint as { seq: string; hash: string; at: string; signature: string };
      const [newest]: { seq: string; hash: string }[] = await t.app.get(DataSource).query('SELECT "seq", "hash" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq" DESC LIMIT 1', [o.store.storeId]);
      expect(checkpoint).toMatchObject({ seq: newest.seq, hash: newest.hash });
      const [header, payload, signature] = checkpoint.signature.split('.');
      const { kid, typ } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string; typ: string };
      expect(typ).toBe('audit-checkpoint');
      expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ storeId: o.store.storeId, seq: newest.seq, hash: newest.hash, at: checkpoint.at });
      const jwks = (await t.http.get('/auth-api/.well-known/jwks.json').expect(200)).body.keys as (JsonWebKeyInput['key'] & { kid: string })[];
      const jwk = jwks.find((k) => k.kid === kid)!;
      expect(verifySignature('sha256', Buffer.from(`${header}.${payload}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature, 'base64url'))).toBe(true);
      // Not a token: the service refuses it as one.
      await t.http.get('/auth-api/currentuser').set(HEADER, o.store.codename).set('Authorization', `Bearer ${checkpoint.signature}`).expect(401);
    } finally {
      stop();
    }
  });

  it('entries written before the chain was keyed (SHA-256, no key) still verify, followed by keyed ones', async () => {
    const o = await ownerOfNewStore(t);
    for (let i = 0; i < 3; i++) await failLogin(t, o.store.codename, `l${i}@example.com`);
    await t.app.get(AuditRecorderService).flush();
    const db = t.app.get(DataSource);
    // As the earlier release wrote them: every hash SHA-256, no key.
    const chain: ChainRow[] = await db.query(`SELECT ${CHAINED} FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq"`, [o.store.storeId]);
    let prevHash: string | null = null;
    for (const row of chain) {
      row.hash = chainHash(prevHash, { ...row, seq: String(row.seq) });
      await db.query('UPDATE "audit_log" SET "prevHash" = $2, "hash" = $3, "keyId" = NULL WHERE "id" = $1', [row.id, prevHash, row.hash]);
      prevHash = row.hash;
    }
    await failLogin(t, o.store.codename, 'l9@example.com');
    await t.app.get(AuditRecorderService).flush();
    const [last]: { keyId: string | null }[] = await db.query('SELECT "keyId" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq" DESC LIMIT 1', [o.store.storeId]);
    expect(last.keyId).toMatch(/^[0-9a-f]{16}$/);
    const res = await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    expect(res.body).toMatchObject({ verified: chain.length + 1, firstBrokenId: null, firstBrokenReason: null });
  });

  it('concurrent writers to one store keep one chain (no two entries after the same one)', async () => {
    const o = await ownerOfNewStore(t);
    const audit = t.app.get(AuditRecorderService);
    await Promise.all(Array.from({ length: 30 }, (_, i) => failLogin(t, o.store.codename, `c${i}@example.com`).then(() => (i % 5 === 0 ? audit.flush() : undefined))));
    await audit.flush();
    const res = await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    expect(res.body.firstBrokenId).toBeNull();
    const [{ n }]: { n: number }[] = await t.app.get(DataSource).query('SELECT count(DISTINCT "prevHash")::int AS n FROM "audit_log" WHERE "storeId" = $1', [o.store.storeId]);
    expect(n).toBe(res.body.verified - 1);
  });

  it('concurrent sign-ins of one store, each written with its session: every one answered, one chain', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const answers = await Promise.all(Array.from({ length: 16 }, () => t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: member.email, password: PASSWORD })));
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(200));
    await t.app.get(AuditRecorderService).flush();
    const res = await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    expect(res.body.firstBrokenId).toBeNull();
    expect((await entries(t, o, { action: 'user.login.succeeded', targetId: member.id })).length).toBe(16);
  });

  it('filters and keyset pages: every entry once, newest first; the envelope pages too', async () => {
    const o = await ownerOfNewStore(t);
    for (let i = 0; i < 7; i++) {
      await failLogin(t, o.store.codename, `p${i}@example.com`);
      clock.advance(10);
    }
    const all = await entries(t, o, { action: 'user.login.failed' });
    expect(all).toHaveLength(7);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const res = await t.http.get(LOGS).query({ action: 'user.login.*', outcome: 'failure', pageRowCount: 3, ...(after && { after }) }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
      pages++;
      expect(res.body.paging).toMatchObject({ pageNumber: pages, pageRowCount: 3, totalRowCount: 7, pageCount: 3 });
      seen.push(...(res.body.auditLogs as Entry[]).map((e) => e.id));
      after = res.body.nextCursor as string | undefined;
    } while (after);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.map((e) => e.id));
    const ats = all.map((e) => Date.parse(e.at as string));
    expect([...ats].sort((a, b) => b - a)).toEqual(ats);
    expect(await entries(t, o, { action: 'user.login.succeeded', outcome: 'failure' })).toEqual([]);
    expect(await entries(t, o, { actorId: o.store.ownerId, action: 'user.login.succeeded' })).toHaveLength(1);
    expect(await entries(t, o, { ip: all[0].ip as string, action: 'user.login.failed' })).toHaveLength(7);
    expect(await entries(t, o, { from: all[2].at as string, action: 'user.login.failed' })).toHaveLength(3);
    expect(await entries(t, o, { to: all[2].at as string, action: 'user.login.failed' })).toHaveLength(5);
    expectError(await t.http.get(LOGS).query({ after: 'bm90LWEtY3Vyc29y' }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`), 400, 'AuditCursorInvalid');
    expectError(await t.http.get(LOGS).query({ action: 'user.*.failed' }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`), 400, 'ValidationFailed');
  });

  it('an action prefix is a range of the store\'s action index, not a read of every entry', async () => {
    const o = await ownerOfNewStore(t);
    // As the list counts `action=user.login.*`; sequential scans off so that a tiny table shows
    // which index can serve the prefix (with a collation other than "C", a plain one cannot). The
    // other indexes leading with the store are dropped for the question, in a transaction rolled
    // back: with a store of a few entries the planner may take any of them (the run's database
    // holds every earlier run's entries), which says nothing of the prefix.
    const runner = t.app.get(DataSource).createQueryRunner();
    let plan: { 'QUERY PLAN': string }[];
    try {
      await runner.query('ANALYZE "audit_log"');
      await runner.startTransaction();
      await runner.query('ALTER TABLE "audit_log" DROP CONSTRAINT IF EXISTS "audit_log_store_seq_key"');
      await runner.query('DROP INDEX IF EXISTS "audit_log_store_seq_key", "audit_log_store_target_idx", "audit_log_store_actor_idx", "audit_log_store_at_idx"');
      await runner.query('SET LOCAL enable_seqscan = off');
      plan = await runner.query(`EXPLAIN SELECT count(*) FROM "audit_log" "a" WHERE "a"."storeId" = $1 AND "a"."action" LIKE $2`, [o.store.storeId, 'user.login.%']);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    // An index-only scan or a bitmap scan of it, as the planner weighs the visibility map; never the table alone.
    expect(text).toMatch(/(Index Only Scan|Bitmap Index Scan) (using|on) audit_log_store_action_prefix_idx/);
    expect(text).not.toMatch(/Seq Scan/);
    expect(text).toMatch(/Index Cond: .*action.* ~?>=~? 'user\.login\.'/);
  });

  it("an administrator of one store never sees another's entries, by filter, cursor or header", async () => {
    const a = await ownerOfNewStore(t);
    const b = await ownerOfNewStore(t);
    for (let i = 0; i < 3; i++) await failLogin(t, b.store.codename, b.store.ownerEmail);
    const ofB = await entries(t, b);
    const bIds = new Set(ofB.map((e) => e.id));
    expect(await entries(t, a, { targetId: b.store.ownerId })).toEqual([]);
    expect(await entries(t, a, { actorId: b.store.ownerId })).toEqual([]);
    const bPage = await t.http.get(LOGS).query({ pageRowCount: 1 }).set(HEADER, b.store.codename).set('Authorization', `Bearer ${b.token}`).expect(200);
    const viaCursor = await entries(t, a, { after: bPage.body.nextCursor as string });
    expect(viaCursor.some((e) => bIds.has(e.id))).toBe(false);
    expect(viaCursor.every((e) => e.storeId === a.store.storeId)).toBe(true);
    expectError(await t.http.get(LOGS).set(HEADER, b.store.codename).set('Authorization', `Bearer ${a.token}`), 403, 'TenantMismatch');
    const exported = await t.http.get(`${LOGS}/export`).query({ targetId: b.store.ownerId }).set(HEADER, a.store.codename).set('Authorization', `Bearer ${a.token}`).expect(200);
    expect(exported.text).toBe('');
  });

  it('the super administrator and a SaaS administrator read any store they target, root included; a saasUser does not', async () => {
    const a = await ownerOfNewStore(t);
    await failLogin(t, a.store.codename, a.store.ownerEmail);
    const superAdmin = await login(t.http, SUPER_ADMIN.username, SUPER_ADMIN.password);
    const makeRootUser = async (roleId: string) => {
      const email = uniqueEmail();
      await t.http.post(USERS).set('Authorization', `Bearer ${superAdmin.accessToken}`).send({ email, password: PASSWORD, fullname: roleId, roleId }).expect(201);
      return (await login(t.http, email, PASSWORD)).accessToken;
    };
    const saasAdmin = await makeRootUser('saasAdmin');
    const saasUser = await makeRootUser('saasUser');
    await t.app.get(AuditRecorderService).flush();
    for (const token of [superAdmin.accessToken, saasAdmin]) {
      const ofA = await t.http.get(LOGS).set(HEADER, a.store.codename).set('Authorization', `Bearer ${token}`).expect(200);
      expect(ofA.body.auditLogs.length).toBeGreaterThan(0);
      expect((ofA.body.auditLogs as Entry[]).every((e) => e.storeId === a.store.storeId)).toBe(true);
      const exported = await t.http.get(`${LOGS}/export`).set(HEADER, a.store.codename).set('Authorization', `Bearer ${token}`).expect(200);
      expect((exported.text as string).trim().split('\n').map((l) => (JSON.parse(l) as Entry).storeId)).toContain(a.store.storeId);
      const root = await t.http.get(LOGS).query({ action: 'user.created' }).set('Authorization', `Bearer ${token}`).expect(200);
      expect((root.body.auditLogs as Entry[]).some((e) => e.storeId !== a.store.storeId)).toBe(true);
    }
    expectError(await t.http.get(LOGS).set(HEADER, a.store.codename).set('Authorization', `Bearer ${saasUser}`), 403, 'TenantMismatch');
    // A store's own administrator is still held to its store.
    expectError(await t.http.get(LOGS).set('Authorization', `Bearer ${a.token}`), 403, 'TenantMismatch');
  });

  it('export: NDJSON and CSV, with the filters', async () => {
    const o = await ownerOfNewStore(t);
    for (let i = 0; i < 4; i++) await failLogin(t, o.store.codename, `e${i}@example.com`);
    const listed = await entries(t, o, { action: 'user.login.failed' });
    const nd = await t.http.get(`${LOGS}/export`).query({ format: 'ndjson', action: 'user.login.failed' }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).buffer(true).parse((res, cb) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => cb(null, text));
    }).expect(200);
    expect(nd.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = (nd.body as string).trim().split('\n').map((l) => JSON.parse(l) as Entry);
    expect(lines.map((e) => e.id)).toEqual(listed.map((e) => e.id));
    const csv = await t.http.get(`${LOGS}/export`).query({ format: 'csv', action: 'user.login.failed' }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const rows = csv.text.trim().split('\n');
    expect(rows[0]).toBe('"id","at","action","outcome","reason","actorType","actorId","actorRoleId","targetType","targetId","ip","userAgent","requestId","sessionId","details","hash"');
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual(listed.map((e) => `"${e.id}"`));
    expect(rows[1]).toContain(',"user.login.failed","failure","unknown_user","anonymous",');
  });

  it('export: a CSV field is always quoted, and one that a spreadsheet would read as a formula starts with a quote mark', async () => {
    const o = await ownerOfNewStore(t);
    // A spreadsheet whose list separator is `;` splits an unquoted field there: `=1+2` would be a formula.
    const agents = ['Mozilla/5.0;=1+2', '=HYPERLINK("http://127.0.0.1/x","y")', '+1+2', '-1+2', '@SUM(1)'];
    for (const agent of agents) {
      await t.http.post('/auth-api/login').set(HEADER, o.store.codename).set('User-Agent', agent).send({ username: 'csv@example.com', password: 'wrong password!' }).expect(401);
      clock.advance(5);
    }
    await t.app.get(AuditRecorderService).flush();
    const csv = await t.http.get(`${LOGS}/export`).query({ format: 'csv', action: 'user.login.failed' }).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
    const lines = csv.text.trim().split('\n');
    const cells = lines.map(splitQuotedCsv);
    // Every field of every line quoted, the header's included.
    expect(cells.every((fields) => fields !== undefined && fields.length === 16)).toBe(true);
    const userAgents = cells.slice(1).map((fields) => fields![11]).reverse();
    expect(userAgents).toEqual(['Mozilla/5.0;=1+2', `'=HYPERLINK("http://127.0.0.1/x","y")`, "'+1+2", "'-1+2", "'@SUM(1)"]);
    // As written on the wire: the `;` stays inside its quotes.
    expect(csv.text).toContain(',"Mozilla/5.0;=1+2",');
    expect(csv.text).toContain(',"\'=HYPERLINK(""http://127.0.0.1/x"",""y"")",');
  });

  it('each written entry is published as <service>-audit-<action> with its store, never a secret', async () => {
    const o = await ownerOfNewStore(t);
    const heard: { topic: string; data: Record<string, unknown> }[] = [];
    const stop = t.app.get(EventPublisher).onPublished((topic, data) => {
      if (data.storeId === o.store.storeId) heard.push({ topic, data });
    });
    try {
      await failLogin(t, o.store.codename, o.store.ownerEmail, 'a guessed password');
      const [entry] = await entries(t, o, { action: 'user.login.failed' });
      const event = await waitFor('the audit event', () => heard.find((h) => h.topic === `${t.app.get(EventPublisher).service}-audit-user-login-failed`));
      expect(event.data).toEqual({ storeId: o.store.storeId, entry });
      expect(JSON.stringify(event.data)).not.toContain('a guessed password');
    } finally {
      stop();
    }
  });

  it('permissions: a tenantUser gets 403 on every audit route; no login 401', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const { accessToken } = await login(t.http, member.email, PASSWORD, o.store.codename);
    for (const path of [LOGS, `${LOGS}/export`, `${LOGS}/verify`]) {
      expectError(await t.http.get(path).set(HEADER, o.store.codename).set('Authorization', `Bearer ${accessToken}`), 403, 'Forbidden');
      await t.http.get(path).set(HEADER, o.store.codename).expect(401);
    }
  });
});

// The owner's token may have been the session a test ended: a fresh one.
async function refreshOwner(t: TestApp, o: Owner): Promise<Owner> {
  const { accessToken } = await login(t.http, o.store.ownerEmail, PASSWORD, o.store.codename);
  return { ...o, token: accessToken };
}

describe('audit log: shutdown and retention', () => {
  it('a burst of failed logins then close: every entry is written', async () => {
    const reader = await startApp();
    try {
      const o = await ownerOfNewStore(reader);
      const burst = await startApp();
      // Six waves of ten at once (sixty at once could wait out the pool's 3 s on a loaded CI
      // machine and be answered 503); close comes right after the last answer.
      for (let wave = 0; wave < 6; wave++) await Promise.all(Array.from({ length: 10 }, (_, i) => failLogin(burst, o.store.codename, `b${wave * 10 + i}@example.com`)));
      await burst.close();
      const [{ n }]: { n: number }[] = await reader.app.get(DataSource).query(`SELECT count(*)::int AS n FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.login.failed'`, [o.store.storeId]);
      expect(n).toBe(60);
    } finally {
      await reader.close();
    }
  });

  it('entries held while the database refused them (5,000 of one store, more than one statement takes) are written whole, in one chain', async () => {
    const t = await startApp();
    const db = t.app.get(DataSource);
    const fn = `refuse_${Date.now()}`;
    try {
      const o = await ownerOfNewStore(t);
      const audit = t.app.get(AuditRecorderService);
      await db.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit entry refused'; END $$`);
      await db.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON "audit_log" FOR EACH ROW WHEN (NEW."storeId" = '${o.store.storeId}') EXECUTE FUNCTION ${fn}()`);
      // Every flush fails and puts its entries back: the queue grows past 65,535 parameters'
      // worth (19 columns an entry).
      for (let i = 0; i < 5000; i++) {
        await audit.record({ storeId: o.store.storeId, action: 'user.login.failed', outcome: 'failure', reason: 'unknown_user', actor: { type: 'anonymous', id: null }, details: { n: i } });
      }
      await audit.flush();
      await db.query(`DROP TRIGGER ${fn} ON "audit_log"`);
      // A retry the recorder had scheduled may still be failing when the trigger goes (it puts
      // its entries back): flushed until the queue holds nothing more.
      const count = async () => ((await db.query(`SELECT count(*)::int AS n FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.login.failed'`, [o.store.storeId])) as { n: number }[])[0].n;
      const n = await waitFor('the 5,000 entries written', async () => {
        await audit.flush();
        const written = await count();
        return written >= 5000 ? written : undefined;
      }).catch(count);
      expect(n).toBe(5000);
      const res = await t.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200);
      expect(res.body.firstBrokenId).toBeNull();
      // Gone again, so that a database the suites share keeps the spread of entries the planner
      // tests expect (the application itself never deletes an entry).
      await db.query('DELETE FROM "audit_log" WHERE "storeId" = $1', [o.store.storeId]);
    } finally {
      await db.query(`DROP TRIGGER IF EXISTS ${fn} ON "audit_log"`).catch(() => undefined);
      await t.close();
    }
  });

  it('entries older than retentionDays go at the sweep, not before', async () => {
    // A clock in the past: the sweep reaches only this test's entries.
    const clock = new ManualClock(new Date('2001-03-01T00:00:00Z'));
    const t = await startApp({ clock, settings: { auditLog: { enabled: true, retentionDays: 30 } } });
    try {
      const o = await ownerOfNewStore(t);
      for (let i = 0; i < 3; i++) await failLogin(t, o.store.codename, `r${i}@example.com`);
      await t.app.get(AuditRecorderService).flush();
      const retention = t.app.get(AuditRetentionService);
      const count = async () => ((await t.app.get(DataSource).query('SELECT count(*)::int AS n FROM "audit_log" WHERE "storeId" = $1', [o.store.storeId])) as { n: number }[])[0].n;
      const before = await count();
      expect(before).toBeGreaterThanOrEqual(3);
      clock.advance(29 * DAY_MS);
      await retention.sweep();
      expect(await count()).toBe(before);
      clock.advance(2 * DAY_MS);
      expect(await retention.sweep()).toBeGreaterThanOrEqual(before);
      expect(await count()).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('auditLog.enabled false: nothing is recorded', async () => {
    const t = await startApp({ settings: { auditLog: { enabled: false, retentionDays: 365 } } });
    try {
      const o = await ownerOfNewStore(t);
      await failLogin(t, o.store.codename, 'off@example.com');
      await t.app.get(AuditRecorderService).flush();
      const rows: unknown[] = await t.app.get(DataSource).query('SELECT 1 FROM "audit_log" WHERE "storeId" = $1', [o.store.storeId]);
      expect(rows).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

// The service's own embedded database (no DATABASE_URL): one transaction at a time, so no chain
// lock; an append checks, in its one statement, that the store's last entry is still the one it
// chained to. The PostgreSQL run has nothing to add here.
const describeEmbedded = describeIf(!process.env.DATABASE_URL, 'for the embedded database only, and DATABASE_URL is set');

describeEmbedded('audit log on the embedded database', () => {
  it('sign-ins at once make one chain; an entry gone from under the process, the next links to what is there', async () => {
    const e = await startApp({ env: { DATABASE_URL: undefined } });
    try {
      const o = await ownerOfNewStore(e);
      const db = e.app.get(DataSource);
      const verify = async () => (await e.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200)).body as Record<string, unknown>;
      const answers = await Promise.all(Array.from({ length: 8 }, () => e.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: o.store.ownerEmail, password: PASSWORD })));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(await verify()).toMatchObject({ firstBrokenId: null });
      await db.query('DELETE FROM "audit_log" WHERE "id" = (SELECT "id" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq" DESC LIMIT 1)', [o.store.storeId]);
      await login(e.http, o.store.ownerEmail, PASSWORD, o.store.codename);
      const seqs: { seq: string }[] = await db.query('SELECT "seq" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq"', [o.store.storeId]);
      expect(seqs.map((r) => Number(r.seq))).toEqual(seqs.map((_, i) => i + 1));
      expect(await verify()).toMatchObject({ verified: seqs.length, firstBrokenId: null, truncated: false });
    } finally {
      await e.close();
    }
  });
});

// Two replicas on one PostgreSQL database writing one store's chain, sign-ins alternating and at
// once: each remembers the last entry it wrote, and its guess is wrong whenever the other wrote
// since; the chain stays one, numbered without a gap. (The embedded database is one process's.)
const describePostgres = describeIf(process.env.DATABASE_URL, 'needs DATABASE_URL: two replicas on one PostgreSQL');

describePostgres('audit log on PostgreSQL with two replicas', () => {
  it('sign-ins on both replicas, alternating and at once, make one chain', async () => {
    const [a, b] = await Promise.all([startApp(), startApp()]);
    try {
      const o = await ownerOfNewStore(a);
      const signIn = (t: TestApp) => t.http.post('/auth-api/login').set(HEADER, o.store.codename).send({ username: o.store.ownerEmail, password: PASSWORD }).expect(200);
      for (let i = 0; i < 4; i++) await signIn(i % 2 ? a : b);
      await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(i % 2 ? a : b)));
      const seqs: { seq: string; action: string }[] = await a.app.get(DataSource).query('SELECT "seq", "action" FROM "audit_log" WHERE "storeId" = $1 ORDER BY "seq"', [o.store.storeId]);
      expect(seqs.map((r) => Number(r.seq))).toEqual(seqs.map((_, i) => i + 1));
      // every sign-in is there: the owner's first and the sixteen
      expect(seqs.filter((r) => r.action === 'user.login.succeeded')).toHaveLength(17);
      const verified = (await a.http.get(`${LOGS}/verify`).set(HEADER, o.store.codename).set('Authorization', `Bearer ${o.token}`).expect(200)).body;
      expect(verified).toMatchObject({ verified: seqs.length, firstBrokenId: null });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('audit log: the shipped live subscription', () => {
  it('console-audit carries every action of the catalogue, each under its own name', () => {
    const shipped = JSON.parse(readFileSync(new URL('../config/settings.default.json', import.meta.url), 'utf8')) as {
      eventSubscriptions: { name: string; topics: { name: string; topic: string }[] }[];
    };
    const live = shipped.eventSubscriptions.find((s) => s.name === 'console-audit')!;
    expect(live.topics.map((t) => [t.name, t.topic]).sort()).toEqual(Object.keys(AUDIT_ACTIONS).map((a) => [a, `audit:${a}`]).sort());
  });
});

// A CSV line whose every field is quoted (RFC 4180, `""` for a quote inside), split into its
// fields; undefined when a field is not quoted.
function splitQuotedCsv(line: string): string[] | undefined {
  const fields: string[] = [];
  const field = /"((?:[^"]|"")*)"(,|$)/y;
  while (field.lastIndex < line.length) {
    const m = field.exec(line);
    if (!m) return undefined;
    fields.push(m[1].replaceAll('""', '"'));
    if (m[2] === '') break;
  }
  return field.lastIndex === line.length ? fields : undefined;
}

import { createHash, createHmac, type KeyObject } from 'node:crypto';

// The fields an entry's hash covers, in this order; `details` with its keys sorted at every
// depth, so PostgreSQL's jsonb (which reorders keys) gives back the same bytes.
export interface ChainedFields {
  id: string;
  storeId: string;
  seq: string;
  at: Date;
  action: string;
  outcome: string;
  reason: string | null;
  actorType: string;
  actorId: string | null;
  actorRoleId: string | null;
  targetType: string | null;
  targetId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  sessionId: string | null;
  details: Record<string, unknown> | null;
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

// An entry's canonical text is `before + seq + after`: split around its place in the chain, so
// the database can hash an entry whose seq it gives (AuditRepository.append).
export function canonicalAround(e: Omit<ChainedFields, 'seq'>): [before: string, after: string] {
  const head = [e.id, e.storeId];
  const tail = [e.at.toISOString(), e.action, e.outcome, e.reason, e.actorType, e.actorId, e.actorRoleId, e.targetType, e.targetId, e.ip, e.userAgent, e.requestId, e.sessionId, e.details];
  return [`[${head.map(canonicalJson).join(',')},"`, `",${tail.map(canonicalJson).join(',')}]`];
}

// Entries written before the chain was keyed (no keyId): hash = SHA-256(prevHash ‖ canonical
// JSON of the entry's fields, in ChainedFields' order); the first entry of a store has no
// prevHash (the empty string). Anyone can recompute it, so it shows an edit only to whoever
// kept a later hash.
export function chainHash(prevHash: string | null, e: ChainedFields): string {
  const [before, after] = canonicalAround(e);
  return createHash('sha256').update(prevHash ?? '').update(`${before}${String(e.seq)}${after}`).digest('hex');
}

// Keyed entries: hash = HMAC-SHA256(key, prevHash ‖ the same canonical text). Without the key
// (never in the database) nobody can make an entry, or a link to one, that checks.
export function keyedChainHash(key: KeyObject, prevHash: string | null, e: ChainedFields): string {
  const [before, after] = canonicalAround(e);
  return createHmac('sha256', key).update(prevHash ?? '').update(`${before}${String(e.seq)}${after}`).digest('hex');
}

// What a checkpoint says: the store's entry `seq`, its hash and time, and when it was signed.
export interface CheckpointFields {
  storeId: string;
  seq: string;
  hash: string;
  at: Date;
  signedAt: Date;
}

// A checkpoint's own HMAC under the chain's key, which the check trusts (the signing keys it is
// also signed with live in the database). The prefix keeps it apart from any entry's text.
export function checkpointMac(key: KeyObject, c: CheckpointFields): string {
  return createHmac('sha256', key).update(`audit-checkpoint:${canonicalJson([c.storeId, String(c.seq), c.hash, c.at.toISOString(), c.signedAt.toISOString()])}`).digest('hex');
}

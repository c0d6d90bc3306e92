import { createHash } from 'node:crypto';

// A name-based UUID (version 8 layout) from a SHA-256 of the name: the same name, the same id,
// on every replica (an id to deduplicate on, or a stable id derived from another one).
export function nameUuid(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x80;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SigningThread } from './signing-thread.js';

const first = generateKeyPairSync('rsa', { modulusLength: 2048 });
const second = generateKeyPairSync('rsa', { modulusLength: 2048 });

function verifies(data: string, signature: string, key: typeof first): boolean {
  return verify('sha256', Buffer.from(data), key.publicKey, Buffer.from(signature, 'base64url'));
}

// The threads the signer runs now (to end one as a crash would).
function workersOf(signer: SigningThread): Worker[] {
  return (signer as unknown as { threads: ({ worker: Worker } | undefined)[] }).threads.flatMap((t) => (t ? [t.worker] : []));
}
const workerOf = (signer: SigningThread): Worker | undefined => workersOf(signer)[0];

describe('SigningThread', () => {
  let signer: SigningThread;
  afterEach(() => signer.close());

  it('answers the signature node:crypto gives on the event loop, under the key asked', async () => {
    signer = new SigningThread();
    const data = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0';
    const signature = await signer.sign(data, first.privateKey);
    expect(signature).toBe(sign('sha256', Buffer.from(data), first.privateKey).toString('base64url'));
    expect(verifies(data, signature, first)).toBe(true);
    expect(verifies(data, await signer.sign(data, second.privateKey), second)).toBe(true);
  });

  it('answers each of many requests of one turn, under two keys, with its own signature', async () => {
    signer = new SigningThread();
    const asked = Array.from({ length: 40 }, (_, i) => ({ data: `payload-${i}`, key: i % 2 ? second : first }));
    const signatures = await Promise.all(asked.map(({ data, key }) => signer.sign(data, key.privateKey)));
    expect(asked.every(({ data, key }, i) => verifies(data, signatures[i], key))).toBe(true);
    expect(new Set(signatures).size).toBe(40);
  });

  it('with two threads allowed: one request at a time is signed on one, the requests of a turn on both', async () => {
    signer = new SigningThread(2);
    for (let i = 0; i < 5; i++) expect(verifies(`alone ${i}`, await signer.sign(`alone ${i}`, first.privateKey), first)).toBe(true);
    expect(workersOf(signer)).toHaveLength(1);
    const together = await Promise.all(Array.from({ length: 6 }, (_, i) => signer.sign(`together ${i}`, first.privateKey)));
    expect(together.every((signature, i) => verifies(`together ${i}`, signature, first))).toBe(true);
    expect(workersOf(signer)).toHaveLength(Math.min(2, availableParallelism())); // one where the machine has one core
  });

  it('refuses a key that cannot sign, and goes on signing', async () => {
    signer = new SigningThread();
    await expect(signer.sign('data', first.publicKey)).rejects.toThrow(/signing failed/);
    expect(verifies('data', await signer.sign('data', first.privateKey), first)).toBe(true);
  });

  it('one thread by default, whatever it is asked', async () => {
    signer = new SigningThread();
    await Promise.all(Array.from({ length: 6 }, (_, i) => signer.sign(`together ${i}`, first.privateKey)));
    expect(workersOf(signer)).toHaveLength(1);
  });

  it('after a thread dies, fails what that thread had in hand and signs the next on a new one', async () => {
    signer = new SigningThread(2);
    await signer.sign('warm', first.privateKey);
    const dying = workerOf(signer)!;
    const inHand = Array.from({ length: 100 }, (_, i) => signer.sign(`in hand ${i}`, first.privateKey));
    // Posted at the end of this turn, before the thread ends.
    await Promise.resolve();
    await dying.terminate();
    const outcomes = await Promise.allSettled(inHand);
    expect(outcomes.some((o) => o.status === 'rejected' && /signing thread exited/.test(String(o.reason)))).toBe(true);
    // The key goes again to the new thread, with the first request there.
    const after = await signer.sign('after', first.privateKey);
    expect(verifies('after', after, first)).toBe(true);
    expect(workerOf(signer)).not.toBe(dying);
  });

  it('once closed, fails what it had in hand and refuses the next', async () => {
    signer = new SigningThread();
    const inHand = signer.sign('in hand', first.privateKey);
    await signer.close();
    await expect(inHand).rejects.toThrow(/closed/);
    await expect(signer.sign('later', first.privateKey)).rejects.toThrow(/closed/);
  });
});

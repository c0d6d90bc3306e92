import { describe, expect, it } from '@jest/globals';
import type { Response } from 'express';
import { OpenRequests } from './http-middleware.js';

function answer(contentType?: string): Response {
  return { getHeader: (name: string) => (name === 'content-type' ? contentType : undefined) } as unknown as Response;
}

describe('OpenRequests', () => {
  it('waits for the requests being answered, not for event streams, and frees their slots for the next', async () => {
    const open = new OpenRequests();
    const json = open.add(answer('application/json'));
    const stream = open.add(answer('text/event-stream; charset=utf-8'));
    const late = open.add(answer());
    expect(new Set([json, stream, late]).size).toBe(3);

    let settled = false;
    const waiting = open.settled(5_000).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(settled).toBe(false);

    open.delete(json);
    expect(open.add(answer('application/json'))).toBe(json); // the freed slot is taken again
    open.delete(json);
    open.delete(late);
    await waiting;
    expect(settled).toBe(true); // the stream is still open
    open.delete(stream);
  });

  it('stops waiting after its timeout', async () => {
    const open = new OpenRequests();
    open.add(answer('application/json'));
    const started = Date.now();
    await open.settled(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});

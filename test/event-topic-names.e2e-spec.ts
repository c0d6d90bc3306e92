import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectSocket, listen, openSse } from './event-clients.js';
import { registerStore, startApp, waitFor, type TestApp } from './helpers.js';

// Client-facing topic names as operators write them: dotted like the broker's own topics.
// A name is any 1-100 characters but commas (the SSE separator), white space and controls.
const topics = [
  { name: 'store.created', dataObjectName: 'store', topic: 'store.created', description: '' },
  { name: 'stores:new/é', dataObjectName: 'store', topic: 'store.created', description: '' },
];
const settings = {
  eventSubscriptions: [
    { name: 'dotted', description: '', transport: 'websocket', topics, auth: { absoluteRoles: [] } },
    { name: 'dotted-sse', description: '', transport: 'sse', topics, auth: { absoluteRoles: [] } },
  ],
} as never;

describe('topic names with dots', () => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startApp({ settings });
    base = await listen(t);
  });
  afterAll(() => t?.close());

  it('boot, subscribe over Socket.IO and SSE, and deliver under the configured name', async () => {
    const socket = await connectSocket(base, 'dotted');
    const sse = await openSse(base, `/events/dotted-sse/stream?topics=${encodeURIComponent('store.created,stores:new/é')}`);
    try {
      socket.socket.emit('subscribe', { topics: ['store.created', 'stores:new/é'] });
      expect(await socket.next('subscribed')).toEqual({ topics: ['store.created', 'stores:new/é'], rejected: [] });
      expect(await sse.next('subscribed')).toEqual({ topics: ['store.created', 'stores:new/é'], rejected: [] });
      const store = await registerStore(t.http);
      for (const client of [socket, sse]) {
        const seen = await waitFor('both topics', () => {
          const mine = client.events().filter((e) => e.data.id === store.storeId);
          return mine.length === 2 ? mine : undefined;
        });
        expect(seen.map((e) => e.topic).sort()).toEqual(['store.created', 'stores:new/é']);
        expect(seen.every((e) => e.name === e.topic)).toBe(true);
      }
    } finally {
      socket.close();
      sse.close();
    }
  });
});

describe('topic names the boot refuses', () => {
  it.each([
    ['a comma', 'store,created'],
    ['a space', 'store created'],
    ['a tab', 'store\tcreated'],
    ['a control character', 'store\u0007created'],
    ['nothing', ''],
    ['101 characters', 'x'.repeat(101)],
  ])('%s', async (_what, name) => {
    const bad = { eventSubscriptions: [{ name: 'dotted', description: '', transport: 'websocket', topics: [{ ...topics[0], name }], auth: { absoluteRoles: [] } }] } as never;
    await expect(startApp({ settings: bad })).rejects.toThrow(/eventSubscriptions.*name must be 1-100 characters other than commas, white space and control characters/s);
  });
});

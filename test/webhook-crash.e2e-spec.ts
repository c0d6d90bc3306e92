import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, Service, until } from './fixtures/service-process.js';
import { PASSWORD, unique, uniqueEmail } from './helpers.js';
import { WebhookReceiver } from './webhook-receiver.js';

// Webhook deliveries survive a SIGKILL: a service with deliveries under way (the endpoint answers
// slowly) is killed with no shutdown of any kind; started again on the same database, it
// delivers every event at least once, and an event delivered twice carries the same
// `webhook-id` both times. Embedded database (a data directory of its own) by default;
// PostgreSQL (a fresh database) and Redis (BullMQ) when set.

const USERS = 20;

describe('webhook deliveries of a service killed (SIGKILL) while they are under way', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhook-crash-'));
  const services: Service[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let receiver: WebhookReceiver | undefined;
  afterAll(async () => {
    for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await Promise.all(services.map((s) => s.exited));
    await receiver?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('loses none: after the restart every event arrives at least once, a repeat with the same webhook-id', async () => {
    database = await freshDatabase(dir);
    receiver = await WebhookReceiver.start();
    const slow = receiver;
    const serviceCodename = unique('whcrash');
    const settings = { webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutMs: 1000 }, domainEvents: { sweepSeconds: 1, leaseSeconds: 1, retentionHours: 24 } };
    const start = () => {
      const service = new Service({ ...database!.options, redisUrl: process.env.REDIS_URL, serviceCodename, hold: false, settings });
      services.push(service);
      return service;
    };

    const first = start();
    const url = await first.ready();
    const post = (path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const owner = { email: uniqueEmail(), password: PASSWORD };
    const registered = (await (await post('/auth-api/v1/registerstoreowner', { ...owner, fullname: 'Hook Owner', store: { name: unique('Crash ') } })).json()) as { store: { codename: string } };
    const store = { 'svc-store-codename': registered.store.codename };
    const { accessToken } = (await (await post('/auth-api/login', { username: owner.email, password: owner.password }, store)).json()) as { accessToken: string };
    const admin = { ...store, authorization: `Bearer ${accessToken}` };
    expect((await post('/auth-api/v1/webhooks', { url: receiver.url('/crash'), topics: ['user-created'] }, admin)).status).toBe(201);

    // The endpoint answers the first users, then takes requests and never answers: the process is
    // killed with deliveries under way and others waiting.
    const created: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const res = await post('/auth-api/users', { email: uniqueEmail(), password: PASSWORD, fullname: `Member ${i}` }, admin);
      expect(res.status).toBe(201);
      created.push(((await res.json()) as { user: { id: string } }).user.id);
      if (i === 2) slow.answer = () => null;
    }
    await until('a few deliveries under way', 30_000, () => receiver!.to('/crash').length >= 3, () => first.log());
    const exited = first.exited;
    first.child.kill('SIGKILL');
    expect(await exited).toEqual({ code: null, signal: 'SIGKILL' });
    slow.answer = () => 200;

    const second = start();
    await second.ready();
    const idOf = (body: string) => (JSON.parse(body) as { data: { id: string } }).data.id;
    await until(`all ${USERS} users delivered after the restart`, 120_000, () => created.every((id) => receiver!.to('/crash').some((r) => idOf(r.body) === id)), () => second.log());

    // At least once each; a user delivered more than once carries one webhook-id on every copy.
    const idsByUser = new Map<string, Set<string>>();
    for (const r of receiver.to('/crash')) idsByUser.set(idOf(r.body), (idsByUser.get(idOf(r.body)) ?? new Set()).add(String(r.headers['webhook-id'])));
    for (const id of created) expect(idsByUser.get(id)?.size).toBe(1);
    await second.stop();
  }, 300_000);
});

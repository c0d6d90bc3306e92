// Notification delivery throughput: `npm run bench` (builds, then runs dist/bench/notifications.js).
// Boots the real application on an embedded in-memory database, once with the in-process queue
// and once with BullMQ when Redis answers on 127.0.0.1:6379, sends BENCH_COUNT notifications
// (default 500) per channel and reports delivered per second, from the first send to the last
// delivery seen in the database. Email goes through our SMTP provider to an SMTP server run
// here on 127.0.0.1; in-app delivery is the row itself. Nothing leaves the machine.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { DataSource } from 'typeorm';
import { createApp } from '../src/app.js';
import type { ChannelName } from '../src/delivery/notification/notification.settings.js';
import { NOTIFICATION_QUEUE as QUEUE_NAME } from '../src/delivery/notification/notification-queue.js';
import { NotificationService } from '../src/delivery/notification/notification.service.js';
import { NotificationSection } from '../src/delivery/notification/notification.settings.js';

const COUNT = Math.min(5000, Math.max(1, Number(process.env.BENCH_COUNT ?? 500) || 500));
const SENDERS = 10; // concurrent callers of send(), like requests arriving together
const RUN_DEADLINE_MS = 120_000;
const REDIS_URL = 'redis://127.0.0.1:6379';

interface Smtp {
  port: number;
  received(): number;
  close(): Promise<void>;
}

async function startSmtp(): Promise<Smtp> {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true, // a DNS lookup per connection would be measured otherwise
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

async function until(ms: number, probe: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

// One application; both channels measured on it, one after the other.
async function runQueue(label: string, redisUrl: string | undefined, smtp: Smtp): Promise<boolean> {
  const serviceCodename = `bench-${randomBytes(4).toString('hex')}`;
  const running = await createApp({
    env: { NODE_ENV: 'development', LOG_LEVEL: 'silent', DATA_DIR: ':memory:', BCRYPT_COST: '4', REDIS_URL: redisUrl, SERVICE_CODENAME: serviceCodename },
    settings: {
      notifications: {
        providers: [{ providerName: 'bench-smtp', providerType: 'smtp', providerSettings: { host: '127.0.0.1', port: smtp.port, from: 'bench@example.com' } }],
        channels: [
          { channelName: 'email', providers: ['bench-smtp'], fallbackProviders: [] },
          { channelName: 'inApp', providers: [], fallbackProviders: [] },
        ],
        templates: [
          { templateName: 'bench', channel: 'email', language: 'en', subject: 'Bench {{n}}', body: '<p>Hello {{user.fullname}}, message {{n}}.</p>' },
          { templateName: 'bench', channel: 'inApp', language: 'en', subject: 'Bench {{n}}', body: 'Hello {{user.fullname}}, message {{n}}.' },
        ],
        eventRules: [],
      },
    },
  });
  let ok = true;
  try {
    const dataSource = running.app.get(DataSource);
    const notifications = running.app.get(NotificationService);
    // The seeded super administrator: a user (for inApp) with an address (for email).
    const [admin] = await dataSource.query<{ id: string; storeId: string }[]>(`SELECT id, "storeId" FROM users ORDER BY "createdAt" LIMIT 1`);
    const { concurrency } = running.config.section(NotificationSection).notifications.worker;

    for (const channel of ['email', 'inApp'] as ChannelName[]) {
      const smtpBefore = smtp.received();
      const count = async (status: string) =>
        (await dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM notifications WHERE channel = $1 AND status = $2`, [channel, status]))[0].n;

      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          while (next < COUNT) {
            const n = next++;
            await notifications.send({ storeId: admin.storeId, channel, template: 'bench', userId: admin.id, contextVars: { n } });
          }
        }),
      );
      const sentMs = performance.now() - started;
      const done = await until(RUN_DEADLINE_MS, async () => (await count('delivered')) >= COUNT || (await count('failed')) > 0);
      const elapsed = (performance.now() - started) / 1000;
      const delivered = await count('delivered');
      const what = channel === 'email' ? 'email (local SMTP)' : 'inApp';
      if (!done || delivered < COUNT) {
        ok = false;
        console.log(`${label}, ${what}: only ${delivered} of ${COUNT} delivered (${await count('failed')} failed) in ${elapsed.toFixed(2)} s`);
        continue;
      }
      const extra = channel === 'email' ? `, SMTP server received ${smtp.received() - smtpBefore}` : '';
      console.log(
        `${label}, ${what}: ${COUNT} delivered in ${elapsed.toFixed(2)} s = ${Math.round(COUNT / elapsed)}/s` +
          ` (worker concurrency ${concurrency}; enqueued in ${(sentMs / 1000).toFixed(2)} s${extra})`,
      );
    }
  } finally {
    await running.close();
    if (redisUrl) {
      // This run's keys only (its own prefix).
      const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
      const queue = new Queue(QUEUE_NAME, { connection, prefix: `${running.config.env.PROJECT_CODENAME}:${serviceCodename}:bull` });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      connection.disconnect();
    }
  }
  return ok;
}

async function main(): Promise<void> {
  console.log(`Notification delivery, ${COUNT} notifications per channel, ${SENDERS} concurrent senders, embedded PGlite in memory`);
  const smtp = await startSmtp();
  let ok = true;
  try {
    ok = (await runQueue('in-process queue', undefined, smtp)) && ok;
    if (await redisAnswers()) {
      ok = (await runQueue(`BullMQ (${REDIS_URL})`, REDIS_URL, smtp)) && ok;
    } else {
      console.log(`BullMQ: skipped (no Redis answering at ${REDIS_URL})`);
    }
  } finally {
    await smtp.close();
  }
  console.log(
    'Email is bound by the SMTP exchange, not the queue: the provider opens a connection per message and the local server ' +
      '(smtp-server) greets 100 ms after accepting it, so each worker slot delivers a few messages a second.',
  );
  process.exitCode = ok ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

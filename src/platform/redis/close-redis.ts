import type { Redis } from 'ioredis';

// Closes a connection for good. A ready one is sent QUIT (what it was sent is answered first);
// one still connecting or reconnecting (a boot refused a moment after it began) is dropped at
// once: a QUIT would wait in its offline queue and leave the socket open after its owner stopped.
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') return redis.disconnect();
  await redis.quit().catch(() => redis.disconnect());
}

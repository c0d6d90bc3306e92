// Port: an at-least-once queue of jobs named by an id (a notification's, a webhook delivery's).
// BullMQ on Redis when REDIS_URL is set, an in-process queue otherwise; a worker's logic is the
// same on both (one contract suite, job-queue.contract.spec.ts).

// Thrown by the processor: retry later (transient) or never (permanent).
export class RetryLater extends Error {}

export type JobProcessor = (id: string, attempt: number, maxAttempts: number) => Promise<void>;

export abstract class JobQueue {
  // Enqueueing the same id twice runs it once.
  abstract enqueue(id: string): Promise<void>;
  abstract start(processor: JobProcessor): Promise<void>;
  // Stops taking jobs and waits for those in flight.
  abstract close(): Promise<void>;
  // Jobs waiting to run, retries waiting for their time included (metrics).
  abstract depth(): Promise<number>;
}

// Exponential backoff with full jitter around it: base·2^(n-1), times 0.5–1.5.
export function backoffDelay(baseMs: number, attempt: number): number {
  return Math.round(baseMs * 2 ** (attempt - 1) * (0.5 + Math.random()));
}

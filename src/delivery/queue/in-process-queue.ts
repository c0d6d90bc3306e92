import { JobQueue, backoffDelay, type JobProcessor } from './job-queue.js';

// The embedded mode's queue: jobs live in memory, so a restart forgets queued ids; their rows
// stay due and their owner's sweep enqueues them again (NotificationWorker, WebhookWorker).
export class InProcessQueue extends JobQueue {
  private processor?: JobProcessor;
  private readonly waiting: { id: string; attempt: number }[] = [];
  private readonly known = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private running = 0;
  private closed = false;
  private idle?: () => void;

  constructor(
    private readonly concurrency: number,
    private readonly maxAttempts: number,
    private readonly backoffMs: number,
  ) {
    super();
  }

  async enqueue(id: string): Promise<void> {
    if (this.known.has(id) || this.closed) return;
    this.known.add(id);
    this.waiting.push({ id, attempt: 1 });
    this.pump();
  }

  async depth(): Promise<number> {
    return this.waiting.length + this.timers.size;
  }

  async start(processor: JobProcessor): Promise<void> {
    this.processor = processor;
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    if (this.running) await new Promise<void>((resolve) => (this.idle = resolve));
  }

  private pump(): void {
    while (this.processor && !this.closed && this.running < this.concurrency && this.waiting.length) {
      const job = this.waiting.shift()!;
      this.running++;
      void this.run(job).finally(() => {
        this.running--;
        if (this.closed && !this.running) this.idle?.();
        this.pump();
      });
    }
  }

  private async run(job: { id: string; attempt: number }): Promise<void> {
    try {
      await this.processor!(job.id, job.attempt, this.maxAttempts);
      this.known.delete(job.id);
    } catch {
      // The processor marks the row failed on its last attempt; before that, try again later.
      if (job.attempt >= this.maxAttempts || this.closed) return void this.known.delete(job.id);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.waiting.push({ id: job.id, attempt: job.attempt + 1 });
        this.pump();
      }, backoffDelay(this.backoffMs, job.attempt));
      this.timers.add(timer);
    }
  }
}

import { setTimeout as sleep } from 'node:timers/promises';

// Makes a path that skips some work take as long as the path that does it, so timing does not
// tell them apart (a code sent to a known address, none to an unknown one). The work's duration
// is smoothed per kind; the skipping path waits that long, less the timers' own lateness (a busy
// event loop fires a timer late), measured and smoothed too.
export class EvenTiming<K extends string> {
  private readonly workMs = new Map<K, number>();
  private lateMs = 0;

  constructor(private readonly initialMs = 2) {}

  async work<T>(kind: K, run: () => Promise<T>): Promise<T> {
    const began = performance.now();
    const result = await run();
    this.workMs.set(kind, smooth(this.workMs.get(kind) ?? this.initialMs, performance.now() - began));
    return result;
  }

  async wait(kind: K): Promise<void> {
    const asked = Math.max(0, (this.workMs.get(kind) ?? this.initialMs) - this.lateMs);
    const began = performance.now();
    await sleep(asked);
    this.lateMs = smooth(this.lateMs, performance.now() - began - asked);
  }
}

function smooth(previous: number, sample: number): number {
  return 0.8 * previous + 0.2 * sample;
}

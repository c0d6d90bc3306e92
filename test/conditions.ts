import { describe, it } from '@jest/globals';

// A suite or test that runs only where `condition` holds. Skipped, its title ends with
// "(skipped: <reason>)", which the run's summary of skipped tests prints (test/skipped-reporter.js).
// Apart from helpers.ts, which loads the whole application, for specs that need nothing else.
export function describeIf(condition: unknown, reason: string): (title: string, fn: () => void) => void {
  return (title, fn) => (condition ? describe(title, fn) : describe.skip(`${title} (skipped: ${reason})`, fn));
}

export function itIf(condition: unknown, reason: string): (title: string, fn: () => Promise<unknown>, timeout?: number) => void {
  return (title, fn, timeout) => (condition ? it(title, fn, timeout) : it.skip(`${title} (skipped: ${reason})`, fn, timeout));
}

// Suites that need a second replica sharing Redis; `why` says what the replicas share there.
export function describeWithRedis(title: string, why: string, fn: () => void): void {
  describeIf(process.env.REDIS_URL, `needs REDIS_URL: ${why}`)(title, fn);
}

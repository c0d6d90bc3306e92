// Milliseconds since `startedAt` (process.hrtime.bigint()), to the microsecond.
export function elapsedMs(from: { startedAt: bigint }): number {
  return Number((process.hrtime.bigint() - from.startedAt) / 1000n) / 1000;
}

import { Logger, type LoggerService } from '@nestjs/common';

export interface NestLogLine {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  message: unknown;
  params: unknown[];
}

// What Nest's `new Logger(context)` instances write, kept for the test to read: code tested
// without an app has no logger of its own, and would print its expected warnings to the run's
// output. `take()` hands over (and forgets) the lines so far; `restore()` puts back the logger
// that was there.
export function captureNestLog(): { take(): NestLogLine[]; restore(): void } {
  const lines: NestLogLine[] = [];
  const keep =
    (level: NestLogLine['level']) =>
    (message: unknown, ...params: unknown[]) =>
      void lines.push({ level, message, params });
  const previous = (Logger as unknown as { staticInstanceRef?: LoggerService }).staticInstanceRef;
  Logger.overrideLogger({ log: keep('log'), error: keep('error'), warn: keep('warn'), debug: keep('debug'), verbose: keep('verbose'), fatal: keep('fatal') });
  return { take: () => lines.splice(0), restore: () => Logger.overrideLogger(previous ?? false) };
}

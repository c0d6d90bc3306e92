import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

// The middle value (the upper one of an even count), as the benches report rounds.
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Resident memory of a process now and at its peak, in MB.
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

// The service of `dist` (a build's dist folder) in a process of its own (bench/sut-server.ts),
// at LOG_LEVEL warn unless set, with `env` over this process's; resolves once it listens. The
// child goes into `children`, for the caller to stop on every way out.
export function startService(dist: string, env: Record<string, string | undefined>, children: ChildProcess[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [`${dist}/bench/sut-server.js`], { env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /listening (\d+)/.exec(err);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`the service of ${dist} exited (${code}): ${err.slice(-2000)}`)));
  });
}

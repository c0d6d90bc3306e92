import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from './helpers.js';

// A PostgreSQL and a Redis of the test's own, on free loopback ports, that the test can stop and
// start again: outages without touching the run's shared servers.

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const privateServersAvailable = existsSync(join(PG_BIN, 'initdb')) && spawnSync('redis-server', ['--version']).status === 0;

// The process id of the Redis answering on the port (`INFO server`), or undefined.
function redisPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (pid: number | undefined) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(1_000, () => done(undefined));
    socket.once('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      const pid = /process_id:(\d+)/.exec(answer);
      if (pid) done(Number(pid[1]));
    });
    socket.once('error', () => done(undefined));
  });
}

// PostgreSQL refuses to run as root: then its commands run as the `postgres` user.
function run(command: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const result = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

export class PrivatePostgres {
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
    if (process.getuid?.() === 0) chownSync(dir, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()), 0);
    run(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
    // As for Redis below: the free port may be taken before the server binds it; then another.
    for (let attempt = 1; ; attempt++) {
      const pg = new PrivatePostgres(dir, await freePort());
      try {
        pg.resume();
        return pg;
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  }

  resume(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    run(join(PG_BIN, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-o', options, '-l', join(this.dir, 'log'), '-w', 'start']);
  }

  stop(): void {
    run(join(PG_BIN, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  destroy(): void {
    try {
      this.stop();
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class PrivateRedis {
  private process?: ChildProcess;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    for (let attempt = 1; ; attempt++) {
      const redis = new PrivateRedis(await freePort());
      try {
        await redis.resume();
        return redis;
      } catch (error) {
        await redis.stop();
        if (attempt === 3) throw error;
      }
    }
  }

  // The port was free a moment ago, but another process (another suite's Redis) may take it
  // before redis-server binds: then this server exits while the other answers on the port, and
  // the other's outage would become this test's. Ready means the Redis answering is this child.
  async resume(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.process = child;
    await waitFor(`redis-server on port ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): port ${this.port} taken`);
      const pid = await redisPid(this.port);
      if (pid !== undefined && pid !== child.pid) throw new Error(`port ${this.port} is another Redis's (pid ${pid})`);
      return pid === child.pid ? true : undefined;
    }, 10_000);
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    this.process = undefined;
  }
}

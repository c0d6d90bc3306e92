import { once } from 'node:events';
import { get as httpGet, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import request from 'supertest';
import { createApp, type RunningApp } from '../../app.js';
import { errorForLog } from './logging.js';

// The real application's logs, read from its log stream.
describe('request logs', () => {
  const lines: string[] = [];
  let app: RunningApp;
  beforeAll(async () => {
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(...chunk.toString().trim().split('\n')), done()) });
    app = await createApp({
      env: { NODE_ENV: 'test', LOG_LEVEL: 'info', DATA_DIR: ':memory:', BCRYPT_COST: '4', DATABASE_URL: process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL },
      logStream: sink,
    });
  });
  afterAll(() => app.close());

  it('carry the request id exactly once on every line of a request, and no credentials', async () => {
    const http = request(app.app.getHttpServer());
    await http.post('/auth-api/login?access_token=secret-token').set('x-request-id', 'trace-1').set('Authorization', 'Bearer secret-token').send({ username: 'nobody@example.com', password: 'secret-password' }).expect(401);
    const mine = lines.filter((l) => l.includes('trace-1'));
    expect(mine.length).toBeGreaterThanOrEqual(1);
    for (const line of mine) {
      expect(line.match(/"requestId"/g)).toHaveLength(1);
      expect(JSON.parse(line).requestId).toBe('trace-1');
      expect(line).not.toMatch(/secret-token|secret-password/);
    }
  });

  it('write one line per answered request: method, path with credentials masked, status, time and store; none for health checks', async () => {
    const http = request(app.app.getHttpServer());
    await http.get('/auth-api/currentuser?token=secret-token&x=1').set('x-request-id', 'trace-2').expect(401);
    await http.get('/health/live').set('x-request-id', 'trace-3').expect(200);
    await http.get('/auth-api/v1/briefstores').set('x-request-id', 'trace-4').set('svc-store-codename', 'root').expect(200);
    const completed = (id: string) => lines.map((l) => JSON.parse(l)).filter((l) => l.requestId === id && l.msg === 'request completed');
    expect(completed('trace-2')).toEqual([
      expect.objectContaining({ level: 30, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), req: { method: 'GET', url: '/auth-api/currentuser?token=[redacted]&x=1', remoteAddress: expect.any(String) }, res: { statusCode: 401 }, responseTime: expect.any(Number) }),
    ]);
    expect(completed('trace-3')).toEqual([]);
    expect(completed('trace-4')).toEqual([expect.objectContaining({ storeId: expect.any(String), res: { statusCode: 200 } })]);
  });

  it('write a path JSON must escape as one valid line', async () => {
    // Sent as is (an HTTP client library would percent-encode the quote).
    const server = (app.app.getHttpServer() as Server).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const status = await new Promise<number>((resolve, reject) =>
      httpGet({ host: '127.0.0.1', port, path: '/auth-api/no"such\\route', headers: { 'x-request-id': 'trace-5' } }, (res) => resolve(res.resume().statusCode!)).on('error', reject),
    );
    server.close();
    expect(status).toBe(404);
    const line = lines.find((l) => l.includes('"trace-5"') && l.includes('request completed'));
    expect(JSON.parse(line!)).toMatchObject({ req: { url: '/auth-api/no"such\\route' }, res: { statusCode: 404 } });
  });
});

const HASH = '$2b$12$abcdefghijklmnopqrstuvABCDEFGHIJKLMNOPQRSTUVWXYZ01234';

describe('errorForLog', () => {
  it('keeps what failed and where (type, SQLSTATE, query, table, constraint, frames), not the parameters or the row', () => {
    const driverError = Object.assign(new Error('new row for relation "users" violates check constraint "users_check"'), {
      code: '23514',
      table: 'users',
      constraint: 'users_check',
      detail: `Failing row contains (${HASH}, someone@example.com).`,
    });
    const error = new QueryFailedError('UPDATE "users" SET "passwordHash" = $1 WHERE "id" = $2', [HASH, 'id'], driverError);
    const logged = errorForLog(error) as Record<string, unknown>;
    expect(logged).toMatchObject({
      type: 'QueryFailedError',
      message: 'new row for relation "users" violates check constraint "users_check"',
      code: '23514',
      query: 'UPDATE "users" SET "passwordHash" = $1 WHERE "id" = $2',
      table: 'users',
      constraint: 'users_check',
    });
    expect(logged.stack).toMatch(/^QueryFailedError: new row .*\n\s+at /);
    expect(JSON.stringify(logged)).not.toContain(HASH);
    expect(JSON.stringify(logged)).not.toContain('someone@example.com');
  });

  it('masks the values a message quotes', () => {
    const error = Object.assign(new Error(`invalid input syntax for type uuid: "${HASH}"`), { code: '22P02' });
    expect(errorForLog(error)).toMatchObject({ message: 'invalid input syntax for type uuid: "[masked]"', code: '22P02' });
    expect(JSON.stringify(errorForLog(error))).not.toContain(HASH);
    expect((errorForLog(new Error('Key ("keyHash")=(abc) already exists.')) as { message: string }).message).toBe('Key ("keyHash")=([masked]) already exists.');
  });

  it('leaves out a Redis reply\'s command and its arguments', () => {
    const error = Object.assign(new Error('ERR wrong number of arguments'), { name: 'ReplyError', command: { name: 'set', args: ['svc:auth:session:x', 'secret-session'] } });
    expect(JSON.stringify(errorForLog(error))).not.toContain('secret-session');
  });
});

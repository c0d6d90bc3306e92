import { describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { isDependencyOutage } from './outage.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDependencyOutage', () => {
  it.each([
    ['PostgreSQL refusing connections', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['every address refused (AggregateError)', new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
    ['PostgreSQL shutting down mid-query', new QueryFailedError('SELECT 1', [], withCode('terminating connection due to administrator command', '57P01'))],
    ['PostgreSQL starting up', withCode('the database system is starting up', '57P03')],
    ['the server gone mid-query', new Error('Connection terminated unexpectedly')],
    ['the pool timing out', new Error('timeout exceeded when trying to connect')],
    ['ioredis giving up', Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' })],
    ['ioredis closed', new Error('Connection is closed.')],
  ])('%s → yes', (_case, error) => {
    expect(isDependencyOutage(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new QueryFailedError('INSERT', [], withCode('duplicate key value violates unique constraint "x"', '23505'))],
    ['a check violation', new QueryFailedError('UPDATE', [], withCode('violates check constraint "x"', '23514'))],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s → no', (_case, error) => {
    expect(isDependencyOutage(error)).toBe(false);
  });
});

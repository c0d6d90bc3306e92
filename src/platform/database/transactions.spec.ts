import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { afterCommit, Transactions } from './transactions.js';

// The data source's part Transactions uses: a transaction that commits when its work resolves.
function transactions(): Transactions {
  const dataSource = { transaction: async (work: (manager: object) => Promise<unknown>) => work({}) };
  return new Transactions(dataSource as unknown as DataSource);
}

describe('afterCommit', () => {
  it('runs once the transaction has committed, not while its work runs', async () => {
    const seen: string[] = [];
    await transactions().run(async (tx) => {
      afterCommit(tx, () => seen.push('published'));
      seen.push('written');
    });
    expect(seen).toEqual(['written', 'published']);
  });

  it('never runs for a transaction that rolls back', async () => {
    const seen: string[] = [];
    await expect(
      transactions().run(async (tx) => {
        afterCommit(tx, () => seen.push('published'));
        throw new Error('constraint violated');
      }),
    ).rejects.toThrow('constraint violated');
    expect(seen).toEqual([]);
  });

  it('runs at once outside a transaction', () => {
    const seen: string[] = [];
    afterCommit(undefined, () => seen.push('published'));
    expect(seen).toEqual(['published']);
  });
});

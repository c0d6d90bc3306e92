import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

// An open transaction. Services only pass it from Transactions.run to repositories; what is
// inside (TypeORM's EntityManager) is the repositories' business, so the type is opaque.
declare const open: unique symbol;
export type Tx = { readonly [open]: true };

// Writes to several tables that stand or fall together (a store and its owner, the seed).
@Injectable()
export class Transactions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  // Every query of `work` must go through `tx`: on the embedded database, waiting on another
  // pooled connection while the transaction is open never ends (docs/adr/0001).
  // What `afterCommit` registered on the transaction runs once it has committed, in order, each
  // hook awaited before the next; nothing of it runs after a rollback.
  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const hooks: CommitHook[] = [];
    const result = await this.dataSource.transaction((manager) => {
      commitHooks.set(manager, hooks);
      return work(manager as unknown as Tx);
    });
    for (const hook of hooks) await hook();
    return result;
  }

  // As run, one at a time across every replica for the same `lock` (a transaction-level
  // advisory lock, released at commit or rollback).
  exclusive<T>(lock: number, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.run(async (tx) => {
      await managerOf(this.dataSource, tx).query('SELECT pg_advisory_xact_lock($1)', [lock]);
      return work(tx);
    });
  }
}

type CommitHook = () => unknown;

const commitHooks = new WeakMap<object, CommitHook[]>();

// Runs `hook` when `tx` commits (at once outside a transaction, or in one not opened by
// Transactions.run): what others may see of a change, such as an event, only once it is there.
// Hooks run in the order registered, a hook's promise awaited before the next hook runs (so what
// must precede an event's delivery, such as dropping cached copies, is registered before it);
// `run` answers once they have. A hook that fails fails `run` (the change is committed by then)
// and the hooks after it do not run: a hook that must not fail catches its own errors.
export function afterCommit(tx: Tx | undefined, hook: CommitHook): void {
  const hooks = tx && commitHooks.get(tx);
  if (hooks) hooks.push(hook);
  else void hook();
}

// For repositories: the transaction's EntityManager, or the pool's outside a transaction.
export function managerOf(dataSource: DataSource, tx?: Tx): EntityManager {
  return tx ? (tx as unknown as EntityManager) : dataSource.manager;
}

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
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(manager as unknown as Tx));
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

// For repositories: the transaction's EntityManager, or the pool's outside a transaction.
export function managerOf(dataSource: DataSource, tx?: Tx): EntityManager {
  return tx ? (tx as unknown as EntityManager) : dataSource.manager;
}

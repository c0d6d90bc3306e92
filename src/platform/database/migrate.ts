import { MigrationExecutor, type DataSource } from 'typeorm';

// Arbitrary constant naming the "schema migration" advisory lock.
const MIGRATION_LOCK = 7_311_001;

// Runs pending migrations in one transaction holding an advisory lock, so replicas (or test
// workers) booting together do not race; the second one finds nothing left to do.
export async function runMigrations(dataSource: DataSource): Promise<number> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.startTransaction();
    await runner.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'none'; // already inside ours
    const done = await executor.executePendingMigrations();
    await runner.commitTransaction();
    return done.length;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    throw error;
  } finally {
    await runner.release();
  }
}

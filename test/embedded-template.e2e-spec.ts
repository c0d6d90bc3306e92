import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { EmbeddedPostgres } from '../src/database/embedded-postgres.js';
import { loadTemplate } from '../src/database/embedded-template.js';

// A first boot on a new data directory starts from the template the build made (no initdb at
// boot); later boots reopen that directory, keeping what was written, and ignore the template.

async function query(db: EmbeddedPostgres, sql: string): Promise<unknown[]> {
  const client = new pg.Client(db.url);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

// The embedded database only: the PostgreSQL run has nothing to add to it.
const describeEmbedded = process.env.DATABASE_URL ? describe.skip : describe;

describeEmbedded('embedded database template', () => {
  it('a first boot starts from the template; the next boot reopens the data written, not the template', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    try {
      // A template with a mark of its own, to tell it from a fresh initdb.
      const source = await PGlite.create({ loadDataDir: loadTemplate() });
      await source.exec(`CREATE TABLE template_mark (v text); INSERT INTO template_mark VALUES ('from the template')`);
      const template = await source.dumpDataDir('gzip');
      await source.close();

      const first = await EmbeddedPostgres.start(dir, template);
      expect(await query(first, 'SELECT v FROM template_mark')).toEqual([{ v: 'from the template' }]);
      await query(first, `INSERT INTO template_mark VALUES ('written after boot')`);
      await first.stop();
      expect(existsSync(join(dir, 'pglite', 'PG_VERSION'))).toBe(true);

      const again = await EmbeddedPostgres.start(dir, undefined);
      expect(await query(again, 'SELECT v FROM template_mark ORDER BY v')).toEqual([{ v: 'from the template' }, { v: 'written after boot' }]);
      await again.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

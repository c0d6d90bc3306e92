import { expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { EmbeddedPostgres } from '../src/platform/database/embedded-postgres.js';
import { MIGRATIONS } from '../src/platform/database/data-source-options.js';
import { loadTemplate, templateDirectory } from '../src/platform/database/embedded-template.js';
import { describeIf, itIf } from './conditions.js';

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
const describeEmbedded = describeIf(!process.env.DATABASE_URL, 'for the embedded database only, and DATABASE_URL is set');
// The build's template (npm run build; CI builds before it tests): a test run from the sources
// alone has none, and its first boots run initdb and the migrations instead.
const itWithBuild = itIf(templateDirectory(), 'needs the build\'s template (npm run build)');

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

  itWithBuild('a first boot on disk copies the build\'s folder: the schema is in place before any migration runs; a folder already there is not overwritten', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    try {
      const first = await EmbeddedPostgres.start(dir);
      const applied = (await query(first, 'SELECT name FROM migrations ORDER BY timestamp')) as { name: string }[];
      expect(applied.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
      await query(first, `CREATE TABLE written_after_boot (v text); INSERT INTO written_after_boot VALUES ('kept')`);
      await first.stop();
      expect(existsSync(join(dir, 'pglite.copying'))).toBe(false);

      const again = await EmbeddedPostgres.start(dir);
      expect(await query(again, 'SELECT v FROM written_after_boot')).toEqual([{ v: 'kept' }]);
      await again.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

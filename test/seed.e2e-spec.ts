import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { DataSource } from 'typeorm';
import { createApp, type RunningApp } from '../src/app.js';
import type { SettingsOverrides } from '../src/settings.js';
import { DEFAULT_SUPER_ADMIN_EMAIL, PLACEHOLDER_MOBILE } from '../src/identity/seed/seed.service.js';
import { expectSocketsReleased, openSockets, registerStore, startApp, type TestApp } from './helpers.js';

const SUPER_ADMINS = `SELECT count(*)::int AS n FROM users u JOIN stores s ON s.id = u."storeId" WHERE s.codename = 'root' AND 'superAdmin' = ANY(u.roles)`;

async function count(db: DataSource, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await db.query(sql, params);
  return row.n;
}

// What the seed must have created exactly once, whatever booted before.
async function seedCounts(db: DataSource) {
  return {
    root: await count(db, `SELECT count(*)::int AS n FROM stores WHERE codename = 'root'`),
    superAdmins: await count(db, SUPER_ADMINS),
    sample: await count(db, `SELECT count(*)::int AS n FROM stores WHERE codename = 'sample'`),
    sampleOwners: await count(
      db,
      `SELECT count(*)::int AS n FROM users u JOIN stores s ON s.id = u."storeId" WHERE s.codename = 'sample' AND 'tenantOwner' = ANY(u.roles)`,
    ),
  };
}


const ONCE = { root: 1, superAdmins: 1, sample: 1, sampleOwners: 1 };

interface SeededUser {
  id: string;
  email: string | null;
  mobile: string | null;
  passwordHash: string;
}

async function superAdmin(db: DataSource): Promise<SeededUser> {
  const rows: SeededUser[] = await db.query(
    `SELECT u.id, u.email, u.mobile, u."passwordHash" FROM users u JOIN stores s ON s.id = u."storeId" WHERE s.codename = 'root' AND 'superAdmin' = ANY(u.roles)`,
  );
  expect(rows).toHaveLength(1);
  return rows[0];
}

// Every codename the public store picker shows, page by page.
async function listedCodenames(http: TestAgent): Promise<string[]> {
  const codenames: string[] = [];
  for (let page = 1; ; page++) {
    const res = await http.get('/auth-api/v1/briefstores').query({ pageNumber: page, pageRowCount: 100 }).expect(200);
    codenames.push(...res.body.stores.map((s: { codename: string }) => s.codename));
    if (page >= res.body.paging.pageCount) return codenames;
  }
}

// The embedded mode as a deployment without DATABASE_URL runs it: env passed explicitly so
// process.env (the run's DATABASE_URL, REDIS_URL) is not read.
function embedded(dataDir: string, env: Record<string, string> = {}, settings: SettingsOverrides = {}): Promise<RunningApp> {
  return createApp({ env: { NODE_ENV: 'test', LOG_LEVEL: 'silent', BCRYPT_COST: '4', DATA_DIR: dataDir, ...env }, settings });
}

describe('seed on the shared database', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startApp();
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  it('creates the root store: never listed, but targetable', async () => {
    expect(await listedCodenames(t.http)).not.toContain('root');
    const res = await t.http.get('/auth-api/v1/briefstores').set('svc-store-codename', 'root').expect(200);
    expect(res.body.status).toBe('OK');
    // the header is read: a store that does not exist is refused
    await t.http.get('/auth-api/v1/briefstores').set('svc-store-codename', 'no-such-store-zz').expect(400);
  });

  it('creates exactly one super administrator, in root', async () => {
    expect(await count(db, SUPER_ADMINS)).toBe(1);
    const admin = await superAdmin(db);
    expect(admin.email ?? admin.mobile).toBeTruthy();
    expect(admin.passwordHash).toMatch(/^\$2[aby]\$/);
  });

  it('creates the sample store, listed, owned by a tenantOwner who logs in like the super administrator', async () => {
    expect(await listedCodenames(t.http)).toContain('sample');
    const admin = await superAdmin(db);
    const owners: Array<SeededUser & { roles: string[]; ownerOf: string }> = await db.query(
      `SELECT u.id, u.email, u.mobile, u."passwordHash", u.roles, s."ownerId" AS "ownerOf"
         FROM users u JOIN stores s ON s.id = u."storeId" WHERE s.codename = 'sample'`,
    );
    expect(owners).toHaveLength(1);
    const [owner] = owners;
    expect(owner.roles).toEqual(['tenantOwner']);
    expect(owner.ownerOf).toBe(owner.id);
    expect(owner.id).not.toBe(admin.id);
    expect(owner.email).toBe(admin.email);
    expect(owner.mobile).toBe(admin.mobile);
    expect(owner.passwordHash).toBe(admin.passwordHash);
  });

  it('is idempotent: another app booting on the same database creates nothing twice', async () => {
    const again = await startApp();
    try {
      expect(await seedCounts(db)).toEqual(ONCE);
    } finally {
      await again.close();
    }
  });

  it('is safe when two apps boot at the same time', async () => {
    const apps = await Promise.all([startApp(), startApp()]);
    try {
      expect(await seedCounts(db)).toEqual(ONCE);
      expect(await seedCounts(apps[1].app.get(DataSource))).toEqual(ONCE);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
  });

  it.each([
    ['an identifier that is not a mobile number while mobile is primary', { SUPER_ADMIN_IDENTIFIER: 'not-a-phone' }, { primaryLoginIdentifier: 'mobile' }, /SUPER_ADMIN_IDENTIFIER/],
    ['an identifier that is not an email while email is primary', { SUPER_ADMIN_IDENTIFIER: 'not-an-email' }, {}, /SUPER_ADMIN_IDENTIFIER/],
    ['a password too short for the password policy', { SUPER_ADMIN_PASSWORD: 'short' }, {}, /SUPER_ADMIN_PASSWORD/],
  ] as Array<[string, Record<string, string>, SettingsOverrides, RegExp]>)('refuses to start with %s (ConfigError naming the key)', async (_, env, settings, named) => {
    const before = await seedCounts(db);
    const sockets = openSockets();
    const boot = startApp({ env, settings });
    await expect(boot).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringMatching(named) });
    expect(await seedCounts(db)).toEqual(before);
    // the refused app released its database pool and Redis connections
    await expectSocketsReleased(sockets);
  });
});

describe('seed in embedded mode (no DATABASE_URL)', () => {
  // Each test boots its own embedded database (initdb included): seconds on a quiet machine,
  // far more on a loaded one.
  jest.setTimeout(120_000);
  it('mobile primary: the super administrator gets the placeholder mobile and no email', async () => {
    const running = await embedded(':memory:', {}, { primaryLoginIdentifier: 'mobile' });
    try {
      expect(running.config.embeddedDatabase).toBe(true);
      const db = running.app.get(DataSource);
      const admin = await superAdmin(db);
      expect(admin.mobile).toBe(PLACEHOLDER_MOBILE);
      expect(admin.email).toBeNull();
      // only this boot's seed: root and sample
      const stores: Array<{ codename: string }> = await db.query('SELECT codename FROM stores ORDER BY codename');
      expect(stores.map((s) => s.codename)).toEqual(['root', 'sample']);
      expect(await seedCounts(db)).toEqual(ONCE);
      const [owner] = await db.query(`SELECT u.email, u.mobile FROM users u JOIN stores s ON s.id = u."storeId" WHERE s.codename = 'sample'`);
      expect(owner).toEqual({ email: null, mobile: PLACEHOLDER_MOBILE });
    } finally {
      await running.close();
    }
  });

  it('email primary with a required secondary: the default email plus the placeholder mobile', async () => {
    const running = await embedded(':memory:', {}, { primaryLoginIdentifier: 'email', secondaryIdentifierPresence: 'required' });
    try {
      const admin = await superAdmin(running.app.get(DataSource));
      expect(admin.email).toBe(DEFAULT_SUPER_ADMIN_EMAIL);
      expect(admin.mobile).toBe(PLACEHOLDER_MOBILE);
    } finally {
      await running.close();
    }
  });

  it('production without SUPER_ADMIN_PASSWORD: refuses to start (ConfigError)', async () => {
    await expect(embedded(':memory:', { NODE_ENV: 'production' })).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringMatching(/SUPER_ADMIN_PASSWORD/),
    });
  });

  it('keeps its data on disk: a reopened folder still lists the store, with one super administrator', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-seed-'));
    try {
      const first = await embedded(dir);
      let mine: string;
      try {
        mine = (await registerStore(request(first.app.getHttpServer()))).codename;
      } finally {
        await first.close();
      }

      const second = await embedded(dir);
      try {
        const http = request(second.app.getHttpServer());
        expect(await listedCodenames(http)).toEqual(['sample', mine]);
        expect(await seedCounts(second.app.get(DataSource))).toEqual(ONCE);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

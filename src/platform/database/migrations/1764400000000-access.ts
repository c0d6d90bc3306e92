import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Access1764400000000 implements MigrationInterface {
  name = 'Access1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "user_groups" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid REFERENCES "stores" ("id") ON DELETE CASCADE,
        "groupName" varchar(100) NOT NULL,
        "avatar" varchar(2048) NOT NULL,
        "ownerId" uuid NOT NULL,
        "createdAt" timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX "user_groups_store_idx" ON "user_groups" ("storeId", "createdAt")`);
    // Deleting a group or a user removes its memberships with it.
    await q.query(`
      CREATE TABLE "user_group_members" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid NOT NULL REFERENCES "stores" ("id") ON DELETE CASCADE,
        "groupId" uuid NOT NULL REFERENCES "user_groups" ("id") ON DELETE CASCADE,
        "userId" uuid NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
        "ownerId" uuid NOT NULL,
        "createdAt" timestamptz NOT NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX "user_group_members_group_user_key" ON "user_group_members" ("groupId", "userId")`);
    await q.query(`CREATE INDEX "user_group_members_store_user_idx" ON "user_group_members" ("storeId", "userId")`);
    // A group's grants end with the group, a user's with the user.
    await q.query(`
      CREATE TABLE "permission_grants" (
        "id" uuid PRIMARY KEY,
        "storeId" uuid REFERENCES "stores" ("id") ON DELETE CASCADE,
        "permission" varchar(100) NOT NULL,
        "roleId" varchar(100),
        "userId" uuid REFERENCES "users" ("id") ON DELETE CASCADE,
        "groupId" uuid REFERENCES "user_groups" ("id") ON DELETE CASCADE,
        "objectId" varchar(200),
        "canDo" boolean NOT NULL,
        "ownerId" uuid NOT NULL,
        "createdAt" timestamptz NOT NULL,
        CONSTRAINT "permission_grants_one_subject" CHECK (num_nonnulls("roleId", "userId", "groupId") <= 1)
      )`);
    await q.query(`CREATE INDEX "permission_grants_store_idx" ON "permission_grants" ("storeId", "permission")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "permission_grants"`);
    await q.query(`DROP TABLE "user_group_members"`);
    await q.query(`DROP TABLE "user_groups"`);
  }
}

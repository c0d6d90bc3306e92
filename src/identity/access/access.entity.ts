import { Column, Entity, PrimaryColumn } from 'typeorm';

// One grant of a permission: to a role, a user or a user group, or (no subject) to every user
// of the store. With `objectId` it is an exception for one object; `canDo` false denies.
// `storeId` null: a SaaS-level grant, made at root, that applies in every store.
@Entity('permission_grants')
export class PermissionGrantEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid', nullable: true })
  storeId: string | null;

  @Column({ type: 'varchar', length: 100 })
  permission: string;

  @Column({ type: 'varchar', length: 100, nullable: true })
  roleId: string | null;

  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ type: 'uuid', nullable: true })
  groupId: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  objectId: string | null;

  @Column({ type: 'boolean' })
  canDo: boolean;

  @Column({ type: 'uuid' })
  ownerId: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}

// `storeId` null: a global (SaaS) group.
@Entity('user_groups')
export class UserGroupEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid', nullable: true })
  storeId: string | null;

  @Column({ type: 'varchar', length: 100 })
  groupName: string;

  @Column({ type: 'varchar', length: 2048 })
  avatar: string;

  @Column({ type: 'uuid' })
  ownerId: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}

// `storeId` is the member's store, so a store admin sees and removes only its own users, also
// in global groups.
@Entity('user_group_members')
export class UserGroupMemberEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  groupId: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'uuid' })
  ownerId: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}

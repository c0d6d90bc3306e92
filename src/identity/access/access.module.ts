import { Module } from '@nestjs/common';
import { AvatarModule } from '../avatar/avatar.module.js';
import { ListPermissions } from '../../kernel/envelope.js';
import { UserModule } from '../user/user.module.js';
import { AccessController } from './access.controller.js';
import { AccessRepository } from './access.repository.js';
import { principalOf } from '../../kernel/request-context.js';
import { PermissionCheckService } from './permission-check.service.js';
import { PermissionGrantService } from './permission-grant.service.js';
import { UserGroupService } from './user-group.service.js';
import { UserGroupController } from './user-group.controller.js';

// Permissions, grants, `can()`, user groups and members. Other features ask only the permission
// check (`PermissionCheckService`); grants and groups are this feature's routes'.
@Module({
  imports: [UserModule, AvatarModule],
  controllers: [AccessController, UserGroupController],
  providers: [
    AccessRepository,
    PermissionCheckService,
    PermissionGrantService,
    UserGroupService,
    // A list answer's `uiPermissions` (the envelope asks).
    { provide: ListPermissions, inject: [PermissionCheckService], useFactory: (permissions: PermissionCheckService): ListPermissions => ({ of: (ctx) => permissions.uiPermissions(principalOf(ctx)) }) },
  ],
  exports: [PermissionCheckService, ListPermissions],
})
export class AccessModule {}

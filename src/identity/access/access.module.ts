import { Module } from '@nestjs/common';
import { AvatarModule } from '../avatar/avatar.module.js';
import { ListPermissions } from '../../kernel/envelope.js';
import { UserModule } from '../user/user.module.js';
import { AccessController } from './access.controller.js';
import { AccessRepository } from './access.repository.js';
import { principalOf } from '../../kernel/request-context.js';
import { AccessService } from './access.service.js';
import { UserGroupController } from './user-group.controller.js';

// Permissions, grants, `can()`, user groups and members.
@Module({
  imports: [UserModule, AvatarModule],
  controllers: [AccessController, UserGroupController],
  providers: [
    AccessRepository,
    AccessService,
    // A list answer's `uiPermissions` (the envelope asks).
    { provide: ListPermissions, inject: [AccessService], useFactory: (access: AccessService): ListPermissions => ({ of: (ctx) => access.uiPermissions(principalOf(ctx)) }) },
  ],
  exports: [AccessService, ListPermissions],
})
export class AccessModule {}

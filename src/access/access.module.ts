import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AvatarModule } from '../avatar/avatar.module.js';
import { UserModule } from '../user/user.module.js';
import { AccessController } from './access.controller.js';
import { AccessRepository } from './access.repository.js';
import { AccessService } from './access.service.js';
import { UiPermissionsInterceptor } from './ui-permissions.interceptor.js';
import { UserGroupController } from './user-group.controller.js';

// Permissions, grants, `can()`, user groups and members.
@Module({
  imports: [UserModule, AvatarModule],
  controllers: [AccessController, UserGroupController],
  providers: [AccessRepository, AccessService, { provide: APP_INTERCEPTOR, useClass: UiPermissionsInterceptor }],
  exports: [AccessService],
})
export class AccessModule {}

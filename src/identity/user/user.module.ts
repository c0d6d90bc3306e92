import { Module } from '@nestjs/common';
import { AvatarModule } from '../avatar/avatar.module.js';
import { PasswordPolicyModule } from '../password-policy/index.js';
import { PasswordHasher } from './password.js';
import { UserRepository } from './user.repository.js';
import { UserService } from './user.service.js';

@Module({
  imports: [AvatarModule, PasswordPolicyModule],
  providers: [UserRepository, UserService, PasswordHasher],
  exports: [UserService, PasswordHasher],
})
export class UserModule {}

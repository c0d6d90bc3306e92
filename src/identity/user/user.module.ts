import { Module } from '@nestjs/common';
import { AvatarModule } from '../avatar/avatar.module.js';
import { PasswordHasher } from './password.js';
import { UserRepository } from './user.repository.js';
import { UserService } from './user.service.js';

@Module({
  imports: [AvatarModule],
  providers: [UserRepository, UserService, PasswordHasher],
  exports: [UserService, PasswordHasher],
})
export class UserModule {}

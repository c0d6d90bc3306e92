import { Module } from '@nestjs/common';
import { BreachedPasswords } from './breached-passwords.js';
import { PasswordPolicyController } from './password-policy.controller.js';
import { PasswordPolicyService } from './password-policy.service.js';

@Module({
  controllers: [PasswordPolicyController],
  providers: [PasswordPolicyService, BreachedPasswords],
  exports: [PasswordPolicyService],
})
export class PasswordPolicyModule {}

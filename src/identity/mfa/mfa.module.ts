import { Module } from '@nestjs/common';
import { PasskeyModule } from '../passkey/passkey.module.js';
import { SessionModule } from '../session/session.module.js';
import { TokenModule } from '../token/token.module.js';
import { UserModule } from '../user/user.module.js';
import { MfaController } from './mfa.controller.js';
import { MfaRepository } from './mfa.repository.js';
import { MfaService } from './mfa.service.js';

// Authenticator apps (TOTP) and recovery codes; the factor overview counts passkeys, and an
// administrator's reset removes them too (the passkey feature's service).
@Module({
  imports: [UserModule, SessionModule, TokenModule, PasskeyModule],
  controllers: [MfaController],
  providers: [MfaRepository, MfaService],
  exports: [MfaService],
})
export class MfaModule {}

import { Module } from '@nestjs/common';
import { SessionModule } from '../session/session.module.js';
import { TokenModule } from '../token/token.module.js';
import { UserModule } from '../user/user.module.js';
import { MfaController } from './mfa.controller.js';
import { MfaRepository } from './mfa.repository.js';
import { MfaService } from './mfa.service.js';
import { NoPasskeyCount, NoPasskeyReset, PasskeyCount, PasskeyReset } from './passkey-hooks.js';

// Authenticator apps (TOTP) and recovery codes. Passkeys are counted and removed through
// PasskeyCount and PasskeyReset, which default to none.
@Module({
  imports: [UserModule, SessionModule, TokenModule],
  controllers: [MfaController],
  providers: [MfaRepository, MfaService, { provide: PasskeyCount, useClass: NoPasskeyCount }, { provide: PasskeyReset, useClass: NoPasskeyReset }],
  exports: [MfaService],
})
export class MfaModule {}

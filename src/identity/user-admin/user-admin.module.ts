import { Module } from '@nestjs/common';
import { ApiKeyModule } from '../apikey/api-key.module.js';
import { BucketModule } from '../bucket/bucket.module.js';
import { MfaModule } from '../mfa/mfa.module.js';
import { SessionModule } from '../session/session.module.js';
import { UserModule } from '../user/user.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { UserAdminController } from './user-admin.controller.js';
import { UserAdminService } from './user-admin.service.js';

@Module({ imports: [UserModule, SessionModule, ApiKeyModule, BucketModule, VerificationModule, MfaModule], controllers: [UserAdminController], providers: [UserAdminService] })
export class UserAdminModule {}

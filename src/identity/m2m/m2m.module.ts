import { Global, Module } from '@nestjs/common';
import { MachineAuthService } from './machine-auth.service.js';
import { UsedTokenIds } from './used-token-ids.js';

@Global()
@Module({ providers: [MachineAuthService, UsedTokenIds], exports: [MachineAuthService] })
export class M2mModule {}

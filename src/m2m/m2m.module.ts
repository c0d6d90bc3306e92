import { Global, Module } from '@nestjs/common';
import { MachineAuthService } from './machine-auth.service.js';

@Global()
@Module({ providers: [MachineAuthService], exports: [MachineAuthService] })
export class M2mModule {}

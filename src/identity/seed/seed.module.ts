import { Module } from '@nestjs/common';
import { AvatarModule } from '../avatar/avatar.module.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { SeedService } from './seed.service.js';

@Module({ imports: [AvatarModule, StoreModule, UserModule], providers: [SeedService] })
export class SeedModule {}

import { Module } from '@nestjs/common';
import { AvatarModule } from '../avatar/avatar.module.js';
import { StoreController } from './store.controller.js';
import { StoreCache } from './store-cache.js';
import { StoreRepository } from './store.repository.js';
import { StoreService } from './store.service.js';

@Module({
  imports: [AvatarModule],
  controllers: [StoreController],
  providers: [StoreRepository, StoreCache, StoreService],
  exports: [StoreService],
})
export class StoreModule {}

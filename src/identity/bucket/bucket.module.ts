import { Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { memoryStorage } from 'multer';
import { AppConfig } from '../../platform/config/app-config.js';
import { avatarStorageProvider } from './avatar-storage.js';
import { BucketController } from './bucket.controller.js';
import { BucketRepository } from './bucket.repository.js';
import { BucketService } from './bucket.service.js';
import { StoreModule } from '../store/store.module.js';
import { UserModule } from '../user/user.module.js';
import { BucketSection } from './bucket.settings.js';

@Module({
  imports: [
    UserModule,
    StoreModule,
    // Above the limit multer stops reading and Nest answers 413.
    MulterModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({ storage: memoryStorage(), limits: { fileSize: config.section(BucketSection).avatarMaxBytes, files: 1, fields: 5, parts: 6 } }),
    }),
  ],
  controllers: [BucketController],
  providers: [BucketService, BucketRepository, avatarStorageProvider],
  exports: [BucketService],
})
export class BucketModule {}

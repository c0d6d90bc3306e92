import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AvatarController } from './avatar.controller.js';
import { AvatarService } from './avatar.service.js';
import { RequestOriginInterceptor } from './request-origin.js';

@Module({
  controllers: [AvatarController],
  providers: [AvatarService, { provide: APP_INTERCEPTOR, useClass: RequestOriginInterceptor }],
  exports: [AvatarService],
})
export class AvatarModule {}

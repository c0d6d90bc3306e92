import { Global, Module } from '@nestjs/common';
import { AntiBotController } from './antibot.controller.js';
import { AntiBotGuard } from './antibot.guard.js';
import { AntiBotService } from './antibot.service.js';

// Global: any public route can take @AntiBotProtected().
@Global()
@Module({ controllers: [AntiBotController], providers: [AntiBotService, AntiBotGuard], exports: [AntiBotService, AntiBotGuard] })
export class AntiBotModule {}

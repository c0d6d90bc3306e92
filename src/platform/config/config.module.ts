import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { AppConfig } from './app-config.js';
import { BootChecks } from './boot-checks.js';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, clock: Clock = new Clock()): DynamicModule {
    // One collector per app: every module reports its settings problems into it.
    const checks = new BootChecks();
    return {
      module: ConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: clock },
        { provide: BootChecks, useValue: checks },
      ],
      exports: [AppConfig, Clock, BootChecks],
    };
  }
}

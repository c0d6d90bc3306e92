import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { AppConfig } from './app-config.js';
import { BootChecks } from './boot-checks.js';
import { CorsPolicy } from './cors.js';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, clock: Clock = new Clock()): DynamicModule {
    // One collector per app; the configuration's own deferred problems (secrets) come first.
    const checks = new BootChecks();
    checks.report(config.problems);
    return {
      module: ConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: clock },
        { provide: CorsPolicy, useValue: new CorsPolicy(config) },
        { provide: BootChecks, useValue: checks },
      ],
      exports: [AppConfig, Clock, CorsPolicy, BootChecks],
    };
  }
}

import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { AppConfig } from './app-config.js';
import { CorsPolicy } from './cors.js';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, clock: Clock = new Clock()): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: clock },
        { provide: CorsPolicy, useValue: new CorsPolicy(config) },
      ],
      exports: [AppConfig, Clock, CorsPolicy],
    };
  }
}

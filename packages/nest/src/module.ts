import { Global, Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { SvcAuthGuard } from './guard.js';
import type { SvcAuthOptions } from './options.js';
import { SvcAuth } from './svc-auth.js';

export const SVC_AUTH_OPTIONS = Symbol('SVC_AUTH_OPTIONS');

// The service's tokens checked in this application: SvcAuth (injectable anywhere) and the global
// guard that reads `@Public()`, `@Authenticated()`, `@Roles()` and `@RequirePermission()`.
@Global()
@Module({})
export class SvcAuthModule {
  static forRoot(options: SvcAuthOptions): DynamicModule {
    return {
      module: SvcAuthModule,
      global: true,
      providers: [
        { provide: SVC_AUTH_OPTIONS, useValue: options },
        { provide: SvcAuth, useFactory: (o: SvcAuthOptions) => new SvcAuth(o), inject: [SVC_AUTH_OPTIONS] },
        SvcAuthGuard,
        { provide: APP_GUARD, useExisting: SvcAuthGuard },
      ],
      exports: [SvcAuth, SvcAuthGuard, SVC_AUTH_OPTIONS],
    };
  }
}

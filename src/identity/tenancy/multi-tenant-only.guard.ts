import { applyDecorators, Injectable, UseGuards, type CanActivate } from '@nestjs/common';
import { ApiFailures } from '../../kernel/api-result.js';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

@Injectable()
export class MultiTenantOnlyGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(): boolean {
    if (this.config.section(TenancySection).tenancy === 'single') {
      throw new AppError('StoreRegistrationUnavailable', 'this deployment has one organisation: there are no stores to register');
    }
    return true;
  }
}

// A route about stores as tenants (store registration): in a single-tenant deployment it answers
// 404 StoreRegistrationUnavailable before anything else runs (anti-bot challenge, body
// validation, rate limits). Place it below the route's other guard decorators so it runs first.
export const MultiTenantOnly = () => applyDecorators(UseGuards(MultiTenantOnlyGuard), ApiFailures(404));

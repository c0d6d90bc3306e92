import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { AppConfig } from '../../platform/config/app-config.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { StoreService } from '../store/store.service.js';
import { checkBodyTarget } from './tenancy.middleware.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

// After a multipart parser (FileInterceptor): the body's `_store` field, now read, is held to the
// store the request was authenticated in (see checkBodyTarget).
@Injectable()
export class MultipartTenancyInterceptor implements NestInterceptor {
  constructor(
    private readonly stores: StoreService,
    private readonly config: AppConfig,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    await checkBodyTarget(this.stores, this.config.section(TenancySection).tenancy, context.switchToHttp().getRequest<ContextRequest>());
    return next.handle();
  }
}

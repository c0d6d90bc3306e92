import { AppError } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

// A login or refresh that named no store is tried at the root level, where a store's account is
// unknown. Its refusal says so and names the header to send, as TenantMismatch does; the same
// words for every username, so nothing tells whether an account exists. (A single-tenant
// deployment has no store to name.)
export function explainRootFallback(req: ContextRequest, config: AppConfig): (error: unknown) => never {
  return (error: unknown) => {
    if (req.ctx.storeTargeted || config.section(TenancySection).tenancy === 'single' || !(error instanceof AppError) || (error.errCode !== 'InvalidCredentials' && error.errCode !== 'RefreshTokenInvalid')) throw error;
    const detail = `${error.detail ?? error.message}; no store was named, so the root level was tried: to sign in to a store, send the header ${config.env.PROJECT_CODENAME}-store-codename: <store codename> (or _store)`;
    throw new AppError(error.errCode, detail, error.headers, error.messageCode, error.fields);
  };
}

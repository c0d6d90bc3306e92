import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Response } from 'express';
import { AppConfig } from '../../platform/config/app-config.js';
import type { Tenancy } from '../../kernel/tenancy.settings.js';
import { AppError } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { CODENAME_SHAPE } from '../store/codename.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';
import { StoreService } from '../store/store.service.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

// Paths that belong to no tenant: operations and documentation.
const UNTENANTED = /^\/(health|docs|metrics)(\/|$|-)/;

// Tenant targeting: header `<project>-store-codename`, then query `_store`, then body `_store`;
// none means root. The store found is the request's tenant for everything after.
@Injectable()
export class TenancyMiddleware implements NestMiddleware {
  private readonly header: string;

  constructor(
    private readonly stores: StoreService,
    private readonly config: AppConfig,
  ) {
    this.header = `${config.env.PROJECT_CODENAME}-store-codename`;
  }

  use(req: ContextRequest, _res: Response, next: NextFunction): void {
    if (UNTENANTED.test(req.path)) return next();
    let codename: string;
    try {
      const named = first(req.headers[this.header]) ?? first(req.query?._store) ?? first(req.body?._store);
      req.ctx.storeTargeted = named !== undefined;
      codename = targetCodename(this.config.section(TenancySection).tenancy, named);
    } catch (error) {
      return next(error);
    }
    // The store cache holds nearly every request's store: then the request goes on at once.
    const held = this.stores.resolveHeld(codename);
    if (held) {
      req.ctx.store = held;
      return next();
    }
    this.stores.resolve(codename).then((store) => {
      req.ctx.store = store;
      next();
    }, next);
  }
}

// The store a request names (none: root).
export async function resolveTarget(stores: StoreService, tenancy: Tenancy, named: unknown): Promise<Tenant> {
  return stores.resolve(targetCodename(tenancy, named));
}

// The codename a request's store is looked up by (none named: root).
function targetCodename(tenancy: Tenancy, named: unknown): string {
  refuseTargetingWhenSingle(tenancy, named);
  const codename = named ?? ROOT_CODENAME;
  // Anything that cannot be a codename is unknown without asking the database.
  if (typeof codename !== 'string' || !CODENAME_SHAPE.test(codename)) throw new AppError('StoreNotFound', 'no store has this codename');
  return codename;
}

// A multipart body is read after the guard, so that an upload is not buffered for a caller not
// yet known; the middleware saw no `_store` field in it. Once the body is read, a field naming a
// store counts as it would in JSON (when no header or query named one): it must be the store the
// request was authenticated in.
export async function checkBodyTarget(stores: StoreService, tenancy: Tenancy, req: ContextRequest): Promise<void> {
  const named = first(req.body?._store);
  if (req.ctx.storeTargeted || named === undefined) return;
  const store = await resolveTarget(stores, tenancy, named);
  if (store.id !== req.ctx.store!.id) throw new AppError('TenantMismatch', 'the credential belongs to another store than the _store field names');
}

// A single-tenant deployment has one organisation, the root store: naming `root` is the same as
// naming none, and naming another store is a client built for stores, told so rather than
// silently served the organisation's data.
export function refuseTargetingWhenSingle(tenancy: Tenancy, named: unknown): void {
  if (tenancy !== 'single' || named === undefined) return;
  if (typeof named === 'string' && named.toLowerCase() === ROOT_CODENAME) return;
  throw new AppError('StoreTargetingUnavailable', 'this deployment has one organisation: send no store codename (header or _store)');
}

function first(value: unknown): unknown {
  const v = Array.isArray(value) ? value[0] : value;
  return v === '' || v == null ? undefined : v;
}

import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import type { ContextRequest } from '../common/request-context.js';
import { ROOT_CODENAME } from '../store/store.entity.js';
import { StoreService } from '../store/store.service.js';

// Paths that belong to no tenant: operations and documentation.
const CODENAME_SHAPE = /^[A-Za-z0-9-]{1,64}$/;
const UNTENANTED = /^\/(health|docs|metrics)(\/|$|-)/;

// Tenant targeting: header `<project>-store-codename`, then query `_store`, then body `_store`;
// none means root. The store found is the request's tenant for everything after.
@Injectable()
export class TenancyMiddleware implements NestMiddleware {
  private readonly header: string;

  constructor(
    private readonly stores: StoreService,
    config: AppConfig,
  ) {
    this.header = `${config.env.PROJECT_CODENAME}-store-codename`;
  }

  async use(req: ContextRequest, _res: Response, next: NextFunction): Promise<void> {
    if (UNTENANTED.test(req.path)) return next();
    try {
      const named = first(req.headers[this.header]) ?? first(req.query?._store) ?? first(req.body?._store);
      const codename = named ?? ROOT_CODENAME;
      req.ctx.storeTargeted = named !== undefined;
      // Anything that cannot be a codename is unknown without asking the database.
      if (typeof codename !== 'string' || !CODENAME_SHAPE.test(codename)) throw new AppError('StoreNotFound', 'no store has this codename');
      req.ctx.store = await this.stores.resolve(codename);
      next();
    } catch (error) {
      next(error);
    }
  }
}

function first(value: unknown): unknown {
  const v = Array.isArray(value) ? value[0] : value;
  return v === '' || v == null ? undefined : v;
}

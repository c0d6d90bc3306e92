import { Injectable, RequestMethod, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Authenticated, Public, type AuthPolicy } from './policy.js';

// Nest's route metadata keys (PATH_METADATA, METHOD_METADATA), not exported from package roots.
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';

export interface ControllerRoute {
  method: string;
  // Express form: `/auth-api/v1/users/:id`.
  path: string;
  handler: (...args: unknown[]) => unknown;
  metatype: object;
}

// Every route of every controller, with the handler and class that carry its metadata.
export function controllerRoutes(discovery: DiscoveryService, scanner: MetadataScanner): ControllerRoute[] {
  const routes: ControllerRoute[] = [];
  for (const wrapper of discovery.getControllers()) {
    const { instance, metatype } = wrapper;
    if (!instance || !metatype) continue;
    const base = String(Reflect.getMetadata(PATH_METADATA, metatype) ?? '');
    const proto = Object.getPrototypeOf(instance) as object;
    for (const name of scanner.getAllMethodNames(proto)) {
      const handler = (proto as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
      if (path === undefined) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      routes.push({ method, path: '/' + [base, path].filter((p) => p && p !== '/').join('/'), handler, metatype });
    }
  }
  return routes;
}

export interface RoutePolicy {
  method: string;
  path: string;
  policy: string;
}

// One line per policy, for the reviewed snapshot: `authenticated(user) roles=tenantAdmin,...`.
function describe(policy: AuthPolicy | undefined): string {
  if (!policy) return 'none';
  const kinds = (Object.keys(policy.principals) as (keyof AuthPolicy['principals'])[]).filter((k) => policy.principals[k]);
  return [
    `authenticated(${kinds.join(',')})`,
    policy.roles && `roles=${policy.roles.join(',')}`,
    `permission=${policy.permission ?? 'none'}`,
    policy.bucketToken && 'bucketToken',
    policy.publicWhen && `publicWhen=${policy.publicWhen}`,
    policy.during2FA && 'during2FA',
    policy.mfaEnrollment && 'mfaEnrollment',
    policy.saasAdminTargetsAnyStore && 'saasAdminTargetsAnyStore',
  ]
    .filter(Boolean)
    .join(' ');
}

// Secure by default: every route must declare its policy, or the service does not start.
@Injectable()
export class PolicyAudit implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const missing = this.routes().filter((r) => r.policy === 'none');
    if (missing.length) {
      throw new Error(`Routes without a policy decorator (@Public or @Authenticated):\n  ${missing.map((r) => `${r.method} ${r.path}`).join('\n  ')}`);
    }
  }

  routes(): RoutePolicy[] {
    return controllerRoutes(this.discovery, this.scanner)
      .map(({ method, path, handler, metatype }) => {
        const targets = [handler, metatype as new () => unknown];
        const policy = this.reflector.getAllAndOverride(Public, targets) ? 'public' : describe(this.reflector.getAllAndOverride(Authenticated, targets));
        return { method, path, policy };
      })
      .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }
}

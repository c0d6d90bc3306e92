import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { controllerRoutes } from './policy-audit.js';

interface RoutePath {
  pattern: RegExp;
  methods: Set<string>;
}

// The methods each route path answers, so that a request whose method its path does not take
// is told 405 and which methods it does (RFC 9110 §15.5.6) rather than a 404, which would say
// there is nothing there. Matched as Express matches (any case, an optional trailing slash).
@Injectable()
export class RouteMethods {
  private paths?: RoutePath[];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  // The methods `path` is served with, sorted (HEAD wherever GET is: Express answers it); none
  // when no route has this path.
  allowed(path: string): string[] {
    this.paths ??= this.table();
    const methods = new Set<string>();
    for (const route of this.paths) if (route.pattern.test(path)) route.methods.forEach((m) => methods.add(m));
    // A route of every method (@All) leaves nothing to refuse.
    if (methods.has('ALL')) return [];
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  // Built at the first wrong method, when every controller is known.
  private table(): RoutePath[] {
    const byPath = new Map<string, Set<string>>();
    for (const { method, path } of controllerRoutes(this.discovery, this.scanner)) {
      if (!byPath.has(path)) byPath.set(path, new Set());
      byPath.get(path)!.add(method);
    }
    return [...byPath].map(([path, methods]) => ({ pattern: toPattern(path), methods }));
  }
}

// `/auth-api/v1/users/:id` as a pattern: literal segments, a parameter one segment.
function toPattern(path: string): RegExp {
  const segments = path.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}/?$`, 'i');
}

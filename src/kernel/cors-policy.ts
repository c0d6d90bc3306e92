import { Injectable } from '@nestjs/common';
import { AppConfig } from '../platform/config/app-config.js';
import { CorsSection } from './cors.settings.js';

// Local development front ends (Vite, Angular, Next, React scripts...) on any port.
const LOCAL_DEV_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

// One answer to "may a page from this origin call us?", for HTTP (CORS) and for the event
// channel (Socket.IO, SSE), so every transport admits the same pages.
@Injectable()
export class CorsPolicy {
  private readonly exact = new Set<string>();
  private readonly patterns: RegExp[] = [];
  readonly anyOrigin: boolean;
  readonly credentials: boolean;
  readonly maxAgeSeconds: number;
  // Always exposed: the request id, the root token header; the store's token header is added
  // per answer (its name depends on the store).
  readonly exposedHeaders: string[];
  readonly tokenHeader: RegExp;

  constructor(config: AppConfig) {
    const { cors } = config.section(CorsSection);
    const project = config.env.PROJECT_CODENAME;
    const devDefault = config.env.NODE_ENV === 'development' || config.env.NODE_ENV === 'test';
    // null: the environment's default, local dev origins in development, none elsewhere.
    const origins = cors.allowedOrigins ?? [];
    if (cors.allowedOrigins === null && devDefault) this.patterns.push(LOCAL_DEV_ORIGIN);
    this.anyOrigin = origins.includes('*');
    for (const origin of origins) {
      if (origin === '*') continue;
      if (origin.includes('://*.')) this.patterns.push(wildcardPattern(origin));
      else this.exact.add(origin.toLowerCase());
    }
    this.credentials = cors.credentials;
    this.maxAgeSeconds = cors.maxAgeSeconds;
    this.exposedHeaders = [...new Set(['x-request-id', `${project}-access-token`, ...cors.exposedHeaders.map((h) => h.toLowerCase())])];
    this.tokenHeader = new RegExp(`^${project}-access-token(-[a-z0-9-]+)?$`, 'i');
  }

  isAllowed(origin: string | undefined): boolean {
    if (!origin) return false;
    if (this.anyOrigin) return true;
    const normal = origin.toLowerCase();
    return this.exact.has(normal) || this.patterns.some((p) => p.test(normal));
  }
}

// `https://*.example.com`: any subdomain of example.com (not example.com itself).
function wildcardPattern(origin: string): RegExp {
  const [scheme, rest] = origin.toLowerCase().split('://*.');
  const escaped = rest.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${scheme}://([a-z0-9-]+\\.)+${escaped}$`);
}

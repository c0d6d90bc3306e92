import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { elapsedMs, type ContextRequest } from './request-context.js';
import { AppConfig } from '../platform/config/app-config.js';
import { DatabasePool } from '../platform/database/database-pool.js';

type LoginOutcome = 'success' | 'invalid_credentials' | 'refused' | 'invalid_request' | 'rate_limited' | 'error';
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

// Login answers by status: the route's outcome without reaching into the login code.
const LOGIN_OUTCOMES: Record<number, LoginOutcome> = { 200: 'success', 400: 'invalid_request', 401: 'invalid_credentials', 403: 'refused', 429: 'rate_limited' };

// The service's Prometheus metrics, one registry per application instance. Features report
// through this service (it is global); it reads no feature itself.
@Injectable()
export class Metrics implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly http: Histogram<'method' | 'route' | 'status'>;
  private readonly logins: Counter<'outcome'>;
  private readonly deliveries: Counter<'channel' | 'outcome'>;
  // Metric names start with it: `<project>_<service>_`.
  readonly prefix: string;

  constructor(
    config: AppConfig,
    pool: DatabasePool,
  ) {
    const prefix = `${config.env.PROJECT_CODENAME}_${config.env.SERVICE_CODENAME}_`.replace(/-/g, '_');
    this.prefix = prefix;
    // Process metrics, event-loop lag (nodejs_eventloop_lag_seconds) among them.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    this.http = new Histogram({
      name: `${prefix}http_request_duration_seconds`,
      help: 'HTTP answers by route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.logins = new Counter({ name: `${prefix}login_total`, help: 'Login attempts by outcome.', labelNames: ['outcome'], registers: [this.registry] });
    this.deliveries = new Counter({
      name: `${prefix}notification_deliveries_total`,
      help: 'Notification delivery attempts by channel and outcome.',
      labelNames: ['channel', 'outcome'],
      registers: [this.registry],
    });
    this.gauge(`${prefix}db_pool_connections`, 'Database pool connections by state.', ['state'], (set) => {
      const counts = pool.counts();
      if (!counts) return;
      set({ state: 'total' }, counts.total);
      set({ state: 'idle' }, counts.idle);
      set({ state: 'waiting' }, counts.waiting);
    });
  }

  // A gauge read when scraped (queue depth, pool sizes).
  gauge<L extends string>(name: string, help: string, labelNames: L[], read: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void): void {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        await read((labels, value) => this.set(labels as never, value));
      },
    });
  }

  notificationDelivery(channel: string, outcome: DeliveryOutcome): void {
    this.deliveries.inc({ channel, outcome });
  }

  // Times every answer by its route pattern (never the raw URL: ids would make a series each);
  // called once a request is over (an HTTP request-end hook). A request whose client left before
  // its answer is not counted.
  observeRequest(req: ContextRequest, res: Response): void {
    if (!res.writableFinished) return;
    const pattern = (req.route as { path?: string } | undefined)?.path;
    // Nest answers unknown paths from a catch-all route.
    const route = pattern && pattern !== '/{*splat}' ? String(pattern) : 'unmatched';
    this.http.observe({ method: req.method, route, status: String(res.statusCode) }, elapsedMs(req.ctx) / 1000);
    if (req.method === 'POST' && route === '/auth-api/login') this.logins.inc({ outcome: LOGIN_OUTCOMES[res.statusCode] ?? 'error' });
  }

  onModuleDestroy(): void {
    this.registry.clear();
  }
}

import { createServer, type Server } from 'node:http';
import { Global, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../platform/config/app-config.js';
import { MetricsController } from './metrics.controller.js';
import { Metrics } from '../../kernel/metrics.js';

// Global: any feature reports through Metrics.
@Global()
@Module({ controllers: [MetricsController], providers: [Metrics], exports: [Metrics] })
export class MetricsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  // With METRICS_PORT, an internal listener of its own: scrapers reach it, the public port does not.
  async onApplicationBootstrap(): Promise<void> {
    const { METRICS_PORT, METRICS_HOST } = this.config.env;
    if (METRICS_PORT === undefined) return;
    this.server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      void this.metrics.registry.metrics().then((text) => res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(text));
    });
    await new Promise<void>((resolve, reject) => this.server!.once('error', reject).listen(METRICS_PORT, METRICS_HOST, resolve));
  }

  // Where the internal listener is (tests use port 0).
  address(): { port: number } | undefined {
    return (this.server?.address() as { port: number } | null) ?? undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Response } from 'express';
import { controllerRoutes } from '../../kernel/policy-audit.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { routeName } from '../../kernel/route-name.js';
import { BrokerSection } from './broker.settings.js';
import { EventPublisher } from './event-publisher.js';
import { apiDoneTopic, resolveTopicAlias } from './topics.js';

// Routes that change something: each success publishes the API's completion event.
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

// Every alias form resolves here: only the `<apiName>:done` ones matter.
const ANY_OBJECT: ReadonlySet<string> = { has: () => true } as unknown as ReadonlySet<string>;

// `<apiName>:done` (SPEC topic aliases): after a 2xx answer of a POST / PUT / PATCH / DELETE route,
// `<svc>-<apiname>-done` carries `{ storeId, _owner, method, path, statusCode }`: the store the
// request targeted, the caller's user id (absent for an anonymous call), the route's path
// pattern and the status. Never the request or response body. The API's name is the route's,
// as in the 2FA message codes: `POST /auth-api/v1/registerstoreuser` → `postRegisterstoreuser`.
@Injectable()
export class ApiDone {
  private readonly logger = new Logger('ApiDoneEvents');

  // Route pattern and method → its completion topic, worked out once per route.
  private readonly topics = new Map<string, string>();

  constructor(private readonly publisher: EventPublisher) {}

  // An HTTP request-end hook: a route's 2xx answer, sent in full, to a request that changes
  // something.
  observeRequest(req: ContextRequest, res: Response): void {
    if (MUTATING.has(req.method) && res.writableFinished) this.done(req, res.statusCode);
  }

  private done(req: ContextRequest, statusCode: number): void {
    // Only a route's own answer: an unmatched path has no route (and answers 404 anyway).
    const pattern = (req.route as { path?: string } | undefined)?.path;
    if (statusCode < 200 || statusCode >= 300 || pattern === undefined) return;
    const path = String(pattern);
    const storeId = req.ctx?.store?.id ?? req.ctx?.session?.storeId;
    const owner = req.ctx?.session?.userId;
    const data = { ...(storeId && { storeId }), ...(owner && { _owner: owner }), method: req.method, path, statusCode };
    this.publisher.publish(this.topicOf(path, req.method), data).catch((err: unknown) => {
      this.logger.error({ err, path, requestId: req.ctx?.requestId }, 'could not publish an API completion event');
    });
  }

  private topicOf(path: string, method: string): string {
    const key = `${method} ${path}`;
    let topic = this.topics.get(key);
    if (topic === undefined) this.topics.set(key, (topic = apiDoneTopic(this.publisher.service, routeName(path, method))));
    return topic;
  }
}

// At boot: an `<apiName>:done` alias in the settings (event subscriptions, notification event
// rules, realtime forward rules) must name a route that changes something, or the service does
// not start. The features that read aliases from their settings declare them here (the event
// subscriptions are the broker's own); they are checked once every module has declared its own.
@Injectable()
export class ApiDoneAliases implements OnModuleInit {
  private readonly declared: [where: string, alias: string][] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly config: AppConfig,
    private readonly checks: BootChecks,
  ) {}

  // An alias a feature's settings name, with where it is written (for the boot's message).
  declare(where: string, alias: string): void {
    this.declared.push([where, alias]);
  }

  onModuleInit(): void {
    this.checks.defer(() => this.problems());
  }

  private problems(): string[] {
    const names = new Map<string, string>();
    for (const r of controllerRoutes(this.discovery, this.scanner)) {
      if (MUTATING.has(r.method)) names.set(routeName(r.path, r.method).toLowerCase(), routeName(r.path, r.method));
    }
    const { eventSubscriptions } = this.config.section(BrokerSection);
    const aliases: [where: string, alias: string][] = [
      ...eventSubscriptions.flatMap((s) => s.topics.map((t): [string, string] => [`settings.eventSubscriptions "${s.name}" topic "${t.name}"`, t.topic])),
      ...this.declared,
    ];
    const problems: string[] = [];
    for (const [where, alias] of aliases) {
      const resolved = resolveTopicAlias(alias, this.config.env.SERVICE_CODENAME, ANY_OBJECT);
      if ('apiName' in resolved && resolved.apiName && !names.has(resolved.apiName.toLowerCase())) {
        problems.push(`${where}: alias "${alias}" names no route that changes something (POST, PUT, PATCH or DELETE); the API names are ${[...names.values()].sort().join(', ')}`);
      }
    }
    return problems;
  }
}

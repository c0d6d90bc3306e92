// The public entry point for backend teams that extend the service (package export
// "./extension", docs/extending.md). Everything an extension may use is exported here, typed;
// nothing else of the service is promised across versions.
import 'reflect-metadata';
import type { DynamicModule, Type } from '@nestjs/common';
import type { ErrorSet } from './kernel/errors.js';
import type { PermissionGroup } from './kernel/extensions.js';
import type { AccessLevel } from './kernel/data-objects.settings.js';
import type { ChannelName } from './kernel/templates.settings.js';

// A data object whose events an extension publishes (`<svc>-<object>-<verb>`), with the access
// level that decides which subscribers hear them, as the settings' `dataObjectAccess` does.
export interface ExtensionDataObject {
  name: string;
  accessLevel: AccessLevel;
  // Whether its events carry `_owner` (the user they belong to).
  hasOwnerField?: boolean;
}

// An event subscription the extension offers on the event channel: the shape of the settings'
// `eventSubscriptions` entries (docs/events.md).
export interface ExtensionEventSubscription {
  name: string;
  description?: string;
  transport: 'websocket' | 'sse';
  topics: { name: string; dataObjectName: string; topic: string; [more: string]: unknown }[];
  auth: Record<string, unknown>;
}

// A notification template the extension ships; the settings' templates of the same name,
// channel and language take its place.
export interface ExtensionTemplate {
  templateName: string;
  channel: ChannelName;
  language: string;
  subject?: string;
  body: string;
  [more: string]: unknown;
}

export interface ExtensionDefinition {
  // Lower-case letters, digits and dashes; unique among the loaded extensions.
  name: string;
  // Nest modules: controllers (behind the same guard: every route declares @Public() or
  // @Authenticated(...)), providers, listeners.
  modules?: (Type<unknown> | DynamicModule)[];
  // TypeORM entities: the extension's own tables. Tenant-level rows carry `storeId`.
  entities?: Function[];
  // TypeORM migrations (class names end with a 13-digit timestamp): run at boot with the
  // service's, in the order of their timestamps, in the same transaction under the same lock.
  migrations?: Function[];
  // A settings section under its own top-level key of the settings file, validated at boot with
  // this class-validator class; inject the class itself to read it.
  settings?: { key: string; schema: new () => object };
  // Error codes (defineErrors), in the one catalogue and docs/errors.md.
  errors?: ErrorSet;
  // Permissions (PBAC): grantable through the grant routes and groups, checked by routes'
  // `@Authenticated({ permission })`.
  permissions?: readonly PermissionGroup[];
  // Audit actions with what each means (dotted, lower-case first letters: `ticket.opened`).
  auditActions?: Readonly<Record<string, string>>;
  // Data objects of the extension's broker events, and subscriptions that offer them.
  dataObjects?: readonly ExtensionDataObject[];
  eventSubscriptions?: readonly ExtensionEventSubscription[];
  // Notification templates.
  templates?: readonly ExtensionTemplate[];
}

// What defineExtension returns: the definition, marked as one (the loader checks the mark, so a
// module that exports something else is refused with a clear message).
export type Extension = Readonly<ExtensionDefinition> & { readonly kind: 'svc.extension' };

// Declares an extension. The definition is checked when the service loads it (a problem stops
// the boot with the extension named).
export function defineExtension<const D extends ExtensionDefinition>(definition: D): D & Extension {
  return Object.freeze({ ...definition, kind: 'svc.extension' as const });
}

export function isExtension(value: unknown): value is Extension {
  return !!value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'svc.extension';
}

// The building blocks: the same the service's own features use.
// Route policy (every route declares one; a route without it stops the boot).
export { Public, Authenticated, USER_ONLY, USER_OR_API_KEY, type AuthPolicy, type Principals } from './kernel/policy.js';
// The request: who calls, for which store.
export { Ctx, principalOf, type ContextRequest, type RequestContext } from './kernel/request-context.js';
export type { SessionData, Principal } from './kernel/principal.js';
export { ROOT_CODENAME, type Tenant } from './kernel/tenant.js';
export { SAAS_ROLES, TENANT_ROLES, SINGLE_TENANT_ROLES, ADMIN_ROLES, hasAdminRole } from './kernel/roles.js';
// Answers: the envelope, paging, errors.
export { Envelope, type Enveloped } from './kernel/envelope.js';
export { PageQuery, pageRequest, paging, type PageRequest, type Paging } from './kernel/paging.js';
export { AppError, defineErrors, type CodesOf, type DeclaredErrors, type ErrCode, type ErrorDefinition, type ErrorSet } from './kernel/errors.js';
// The audit log and domain events.
export { AuditLog, auditActor, auditContext, auditContextOf, type AuditActor, type AuditContext, type AuditInput, type ExtensionAuditActions } from './kernel/audit.js';
// Domain events: emitted in the change's transaction (the outbox), delivered at least once after
// it commits to `@OnDomainEvent` listeners, each with its stable `id`.
export { DomainEvents, OnDomainEvent, type DomainEvent, type DomainEventMap, type DomainEventName } from './kernel/domain-events.js';
export type { PermissionGroup } from './kernel/extensions.js';
// Broker events (`<svc>-<object>-<verb>`), heard on the event channel and by notification rules.
export { EventPublisher } from './delivery/broker/event-publisher.js';
export { BrokerModule } from './delivery/broker/broker.module.js';
// Storage: transactions, and the data source for repositories.
export { Transactions, afterCommit, managerOf, type Tx } from './platform/database/transactions.js';
export { InjectDataSource } from '@nestjs/typeorm';
export { Column, CreateDateColumn, DataSource, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn, type EntityManager, type MigrationInterface, type QueryRunner } from 'typeorm';
// Notifications (templates: the definition's `templates`, or the settings').
export { NotificationModule } from './delivery/notification/notification.module.js';
export { NotificationService, type SendRequest } from './delivery/notification/notification.service.js';
// Providers (global registries: inject one and register from your module's onModuleInit).
export { SocialProviderRegistry } from './identity/social/social-provider-registry.js';
export { SocialProviderError, type SocialAuthorizationRequest, type SocialCallback, type SocialProfile, type SocialProvider, type SocialProviderFailure } from './identity/social/social-provider.js';
export { ProviderRegistry as NotificationProviderRegistry, type ProviderPlacement } from './delivery/notification/provider-registry.js';
export { ProviderError, type NotificationProvider, type OutgoingMessage } from './delivery/notification/providers/provider.js';
// The configuration, read-only: the environment and the service's settings (paging limits...).
export { AppConfig } from './platform/config/app-config.js';
// Time as the service sees it (tests move it).
export { Clock } from './platform/clock/clock.js';

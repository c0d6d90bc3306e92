import type { Tenancy } from './tenancy.settings.js';

// The spec's role sets. Tenant-level users hold tenant roles; the root store holds SaaS roles,
// or, in a single-tenant deployment (settings.tenancy), the organisation's roles.
export const SAAS_ROLES = { superAdmin: 'superAdmin', saasAdmin: 'saasAdmin', saasUser: 'saasUser' } as const;
export const TENANT_ROLES = { tenantOwner: 'tenantOwner', tenantAdmin: 'tenantAdmin', tenantUser: 'tenantUser' } as const;
export const SINGLE_TENANT_ROLES = { superAdmin: 'superAdmin', admin: 'admin', user: 'user' } as const;

export const ADMIN_ROLES = ['superAdmin', 'admin', 'saasAdmin', 'tenantOwner', 'tenantAdmin'] as const;

// The built-in roles of one level: the organisation's in a single-tenant deployment, else the
// SaaS level's at root and a tenant's in a store. `top` is granted only by a super administrator.
export function levelRoles(tenancy: Tenancy, atRoot: boolean): { top: string; admin: string; user: string } {
  if (tenancy === 'single') return { top: SINGLE_TENANT_ROLES.superAdmin, admin: SINGLE_TENANT_ROLES.admin, user: SINGLE_TENANT_ROLES.user };
  return atRoot
    ? { top: SAAS_ROLES.superAdmin, admin: SAAS_ROLES.saasAdmin, user: SAAS_ROLES.saasUser }
    : { top: TENANT_ROLES.tenantOwner, admin: TENANT_ROLES.tenantAdmin, user: TENANT_ROLES.tenantUser };
}

export function hasAdminRole(roles: readonly string[]): boolean {
  return roles.some((r) => (ADMIN_ROLES as readonly string[]).includes(r));
}

// Each built-in role with the lesser roles of its level it includes: a caller may act (e.g.
// through an API key) with any of these, never with a role above or beside its own.
const INCLUDED_ROLES: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  [SAAS_ROLES.superAdmin, [SAAS_ROLES.saasAdmin, SAAS_ROLES.saasUser]],
  [SAAS_ROLES.saasAdmin, [SAAS_ROLES.saasUser]],
  [TENANT_ROLES.tenantOwner, [TENANT_ROLES.tenantAdmin, TENANT_ROLES.tenantUser]],
  [TENANT_ROLES.tenantAdmin, [TENANT_ROLES.tenantUser]],
  [SINGLE_TENANT_ROLES.admin, [SINGLE_TENANT_ROLES.user]],
]);

export function rolesWithin(roles: readonly string[]): Set<string> {
  return new Set(roles.flatMap((r) => [r, ...(INCLUDED_ROLES.get(r) ?? [])]));
}

// Users an administrator changes only as a super administrator (or as themselves).
const PROTECTED_ROLES: readonly string[] = [SAAS_ROLES.superAdmin, TENANT_ROLES.tenantOwner];

// May this administrator change this user? Owners and super administrators are changed only by
// a super administrator.
export function outranks(actorRoles: readonly string[], targetRoles: readonly string[]): boolean {
  return actorRoles.includes(SAAS_ROLES.superAdmin) || !targetRoles.some((r) => PROTECTED_ROLES.includes(r));
}

// The one rule of who manages whom (a user's profile, its API keys): itself, or an
// administrator of its store who outranks it. Both are in the same store (the caller's).
export function mayManage(actor: { userId: string; roles: readonly string[] }, target: { id: string; roles: readonly string[] }): boolean {
  return actor.userId === target.id || (hasAdminRole(actor.roles) && outranks(actor.roles, target.roles));
}

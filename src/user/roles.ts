// The spec's role sets. Tenant-level users hold tenant roles; the root store holds SaaS roles.
export const SAAS_ROLES = { superAdmin: 'superAdmin', saasAdmin: 'saasAdmin', saasUser: 'saasUser' } as const;
export const TENANT_ROLES = { tenantOwner: 'tenantOwner', tenantAdmin: 'tenantAdmin', tenantUser: 'tenantUser' } as const;
export const SINGLE_TENANT_ROLES = { superAdmin: 'superAdmin', admin: 'admin', user: 'user' } as const;

export const ADMIN_ROLES = ['superAdmin', 'admin', 'saasAdmin', 'tenantOwner', 'tenantAdmin'] as const;

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

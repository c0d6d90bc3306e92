// The spec's role sets. Tenant-level users hold tenant roles; the root store holds SaaS roles.
export const SAAS_ROLES = { superAdmin: 'superAdmin', saasAdmin: 'saasAdmin', saasUser: 'saasUser' } as const;
export const TENANT_ROLES = { tenantOwner: 'tenantOwner', tenantAdmin: 'tenantAdmin', tenantUser: 'tenantUser' } as const;
export const SINGLE_TENANT_ROLES = { superAdmin: 'superAdmin', admin: 'admin', user: 'user' } as const;

export const ADMIN_ROLES = ['superAdmin', 'admin', 'saasAdmin', 'tenantOwner', 'tenantAdmin'] as const;

export function hasAdminRole(roles: readonly string[]): boolean {
  return roles.some((r) => (ADMIN_ROLES as readonly string[]).includes(r));
}

export const BUILT_IN_ROLES = new Set<string>([
  ...Object.values(SAAS_ROLES),
  ...Object.values(TENANT_ROLES),
  ...Object.values(SINGLE_TENANT_ROLES),
]);

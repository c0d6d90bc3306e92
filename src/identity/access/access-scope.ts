import type { AccessSettings } from './access.settings.js';
import { ROOT_CODENAME, type Tenant } from '../../kernel/tenant.js';

// Grants made at root are SaaS-level (storeId null) and apply in every store.
export function grantScope(store: Tenant): string | null {
  return store.codename === ROOT_CODENAME ? null : store.id;
}

// Groups are the store's own with `userGroupsInTenantLevel` (outside root); otherwise global
// (storeId null).
export function groupScope(settings: AccessSettings, store: Tenant): string | null {
  return settings.userGroupsInTenantLevel && store.codename !== ROOT_CODENAME ? store.id : null;
}

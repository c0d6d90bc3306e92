import type { DataObjectAccessSetting } from '../../kernel/data-objects.settings.js';

// The service's own data objects and their default access (SPEC: store public, user
// protected, apiKey and notification private; session private too: a user hears of its own
// sessions ending, its store's admins of all; auditLog to the store's admins only). Settings may change them.
export const BUILT_IN_OBJECTS: readonly DataObjectAccessSetting[] = [
  { name: 'store', accessLevel: 'accessPublic', hasOwnerField: true },
  { name: 'user', accessLevel: 'accessProtected', hasOwnerField: true },
  { name: 'apiKey', accessLevel: 'accessPrivate', hasOwnerField: true },
  { name: 'notification', accessLevel: 'accessPrivate', hasOwnerField: true },
  { name: 'session', accessLevel: 'accessPrivate', hasOwnerField: true },
  // Audit entries (`<svc>-audit-<action>`): the store's administrators only.
  { name: 'auditLog', accessLevel: 'accessPrivate', hasOwnerField: false },
];

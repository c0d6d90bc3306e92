// The permissions the service's own routes declare (`@Authenticated({ permission })`). They are
// always known, beside the deployment's `permissionGroups`. With `pbacIsActive` a route's
// permission decides instead of its role list; the roles its routes name hold these
// (PermissionCatalogue.service), so turning PBAC on changes no answer until a grant does.
export const P = {
  usersList: 'users.list',
  usersRead: 'users.read',
  usersCreate: 'users.create',
  usersUpdate: 'users.update',
  usersDelete: 'users.delete',
  apiKeysList: 'apikeys.list',
  apiKeysCreate: 'apikeys.create',
  apiKeysDelete: 'apikeys.delete',
  storeRead: 'store.read',
  storeUpdate: 'store.update',
  storesList: 'stores.list',
  grantsRead: 'permissiongrants.read',
  grantsWrite: 'permissiongrants.write',
  groupsRead: 'usergroups.read',
  groupsWrite: 'usergroups.write',
  membersRead: 'usergroupmembers.read',
  membersWrite: 'usergroupmembers.write',
  auditLogRead: 'auditLog.read',
  overviewRead: 'overview.read',
  webhooksRead: 'webhooks.read',
  webhooksWrite: 'webhooks.write',
  oauthClientsRead: 'oauthclients.read',
  oauthClientsWrite: 'oauthclients.write',
} as const;

export type ServicePermission = (typeof P)[keyof typeof P];

export const SERVICE_PERMISSION_GROUPS: readonly { groupName: string; permissions: readonly ServicePermission[] }[] = [
  { groupName: 'users', permissions: [P.usersList, P.usersRead, P.usersCreate, P.usersUpdate, P.usersDelete] },
  { groupName: 'apiKeys', permissions: [P.apiKeysList, P.apiKeysCreate, P.apiKeysDelete] },
  { groupName: 'store', permissions: [P.storeRead, P.storeUpdate, P.storesList] },
  { groupName: 'permissionGrants', permissions: [P.grantsRead, P.grantsWrite] },
  { groupName: 'userGroups', permissions: [P.groupsRead, P.groupsWrite, P.membersRead, P.membersWrite] },
  { groupName: 'auditLog', permissions: [P.auditLogRead] },
  { groupName: 'overview', permissions: [P.overviewRead] },
  { groupName: 'webhooks', permissions: [P.webhooksRead, P.webhooksWrite] },
  { groupName: 'oauthClients', permissions: [P.oauthClientsRead, P.oauthClientsWrite] },
];

// What only the SaaS level's administrators hold (`superAdmin`, `saasAdmin`): the list of every
// store. The others of `SERVICE_PERMISSION_GROUPS` not in EVERY_ROLE_PERMISSIONS are every
// administrator role's.
export const SAAS_ADMIN_PERMISSIONS: readonly ServicePermission[] = [P.storesList];

// What the routes open to every role (a user reads and changes itself, manages its own keys);
// the others are the administrators'.
export const EVERY_ROLE_PERMISSIONS: readonly ServicePermission[] = [P.usersRead, P.usersUpdate, P.apiKeysList, P.apiKeysCreate, P.apiKeysDelete];

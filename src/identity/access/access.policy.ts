import type { AccessSettings } from './access.settings.js';
import { AppError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { Tenant } from '../../kernel/tenant.js';
import { hasAdminRole, mayManage, rolesWithin, SAAS_ROLES, TENANT_ROLES } from '../../kernel/roles.js';
import { knownRoles } from './permissions.js';

// Who asks to change a grant, a group or a membership.
export interface Changer {
  userId: string;
  roles: readonly string[];
  // The store's owner with its own login (not a key of it): the top of its store.
  ownsStore: boolean;
}

// A user as the rule weighs it.
export interface Affected {
  id: string;
  roles: readonly string[];
}

// What a change does, and to whom.
export type Effect =
  // a grant to a role, or to the whole store (no subject), set or lifted
  | { grant: 'role'; roleId: string }
  | { grant: 'store' }
  // a grant reaching this user (by its id, or through a group it is in): being set (no `setBy`),
  // or lifted (`setBy`: who set it)
  | { grant: 'user'; user: Affected; setBy?: string }
  // a membership of this user added, moved or ended, or its group renamed or deleted; `takes`:
  // who set what the user loses by it (the membership, the grants its group carries)
  | { member: Affected; takes: readonly string[] };

export interface Refusal {
  errCode: 'GrantTargetNotManaged' | 'Forbidden';
  detail: string;
}

// Who may change what affects whom: the one rule behind every change of grants, groups and
// memberships. The store's owner changes anything in its store. Anyone else:
// - sets or lifts a grant only over those it outranks: roles below its own, users it may manage
//   (the user-management rule) other than itself, every member of a group, never the whole store
//   (a super administrator excepted);
// - adds, moves or ends a membership, or renames or deletes a group, only for users it may
//   manage, itself included (joining a group is its own business);
// - never takes from itself what someone else set: a grant, a membership, or the grants a
//   membership carries. Records name who set them (`ownerId`) but not that one's rank then,
//   which may since have changed; whoever could set something on the caller could manage it
//   at the time, so it counts as above: it, or someone over the caller, lifts it.
// Refusals keep each route family's code: GrantTargetNotManaged for grants, Forbidden for
// memberships (as adding one always answered).
export function changeRefusal(settings: AccessSettings, caller: Changer, effects: readonly Effect[]): Refusal | undefined {
  if (caller.ownsStore) return undefined;
  const setAbove = (setBy: readonly (string | undefined)[]) => setBy.some((id) => id !== caller.userId);
  for (const e of effects) {
    if ('member' in e) {
      if (!mayManage(caller, e.member)) return { errCode: 'Forbidden', detail: 'memberships are changed only for users you may manage' };
      if (e.member.id === caller.userId && setAbove(e.takes)) return { errCode: 'Forbidden', detail: 'you may not take from yourself a membership, or grants, that someone else set' };
      continue;
    }
    let ok: boolean;
    if (e.grant === 'role') ok = rolesBelow(settings, caller.roles).has(e.roleId);
    else if (e.grant === 'store') ok = caller.roles.includes(SAAS_ROLES.superAdmin);
    // a grant on oneself: never set, lifted only when one set it oneself
    else ok = e.user.id === caller.userId ? e.setBy !== undefined && !setAbove([e.setBy]) : mayManage(caller, e.user);
    if (!ok) return { errCode: 'GrantTargetNotManaged', detail: 'grants are managed only for roles below yours and users you may manage other than yourself (the whole store: its owner)' };
  }
  return undefined;
}

// The rule applied to a caller changing something in a store: refused with the rule's code.
export function assertMayChange(settings: AccessSettings, principal: Principal, store: Tenant, effects: readonly Effect[]): void {
  const ownsStore = principal.kind === 'user' && store.ownerId !== null && principal.userId === store.ownerId;
  const refused = changeRefusal(settings, { userId: principal.userId!, roles: principal.roles, ownsStore }, effects);
  if (refused) throw new AppError(refused.errCode, refused.detail);
}

// Roles strictly below these: custom roles are below every admin role; SaaS admins outrank the
// tenant roles; a super administrator every role but its own.
export function rolesBelow(settings: AccessSettings, roles: readonly string[]): Set<string> {
  if (roles.includes(SAAS_ROLES.superAdmin)) return new Set([...knownRoles(settings)].filter((r) => r !== SAAS_ROLES.superAdmin));
  const below = new Set(roles.flatMap((r) => [...rolesWithin([r])].filter((lesser) => lesser !== r)));
  if (roles.includes(SAAS_ROLES.saasAdmin)) for (const r of Object.values(TENANT_ROLES)) below.add(r);
  if (hasAdminRole(roles)) for (const r of settings.customRoles) below.add(String(r.value));
  for (const r of roles) below.delete(r);
  return below;
}

import type { Principal } from '../../kernel/principal.js';
import { Environment } from '@marcbachmann/cel-js';
import type { AccessSettings } from './access.settings.js';
import { ConfigError } from '../../platform/config/env.js';
import type { PermissionGroup } from '../../kernel/extensions.js';
import { EVERY_ROLE_PERMISSIONS, SAAS_ADMIN_PERMISSIONS, SERVICE_PERMISSION_GROUPS } from '../../kernel/service-permissions.js';
import { hasAdminRole, SAAS_ROLES, SINGLE_TENANT_ROLES, TENANT_ROLES } from '../../kernel/roles.js';

const SERVICE_PERMISSIONS: ReadonlySet<string> = new Set(SERVICE_PERMISSION_GROUPS.flatMap((g) => g.permissions));
const EVERY_ROLE: ReadonlySet<string> = new Set(EVERY_ROLE_PERMISSIONS);
const SAAS_ADMIN: ReadonlySet<string> = new Set(SAAS_ADMIN_PERMISSIONS);
const SAAS_ADMIN_ROLES: readonly string[] = [SAAS_ROLES.superAdmin, SAAS_ROLES.saasAdmin];

// The object of an object-level check: its kind (an attributeRules dataObject), id and fields.
export interface AccessObject {
  dataObject: string;
  id?: string;
  data?: Record<string, unknown>;
}

// A grant as decided on: `objectId` set makes it an exception for that object.
export interface GrantLike {
  permission: string;
  roleId: string | null;
  userId: string | null;
  groupId: string | null;
  objectId: string | null;
  canDo: boolean;
}

// Roles that pass every permission check.
export const ABSOLUTE_ROLES: readonly string[] = [SAAS_ROLES.superAdmin];

const BUILT_IN_ROLES: ReadonlySet<string> = new Set<string>([...Object.values(SAAS_ROLES), ...Object.values(TENANT_ROLES), ...Object.values(SINGLE_TENANT_ROLES)]);

// Built-in and custom role values in their text form (as users and grants hold them).
export function knownRoles(settings: AccessSettings): Set<string> {
  return new Set<string>([...BUILT_IN_ROLES, ...settings.customRoles.map((r) => String(r.value))]);
}

// The text form of a role value given by a client, when it names a role as declared (a number
// custom role is named by the number, not by its text).
export function roleText(settings: AccessSettings, given: unknown): string | undefined {
  const declared = typeof given === 'number' ? settings.customRoles.some((r) => r.value === given) : typeof given === 'string' && (BUILT_IN_ROLES.has(given) || settings.customRoles.some((r) => r.value === given));
  return declared ? String(given) : undefined;
}

// A stored role back as the settings declare it: a number custom role as its number.
export function roleValue(settings: AccessSettings, text: string): string | number {
  return settings.customRoles.find((r) => typeof r.value === 'number' && String(r.value) === text)?.value ?? text;
}

type Rule = { name: string; dataObject: string; permissions: string[]; where: (vars: Record<string, unknown>) => unknown };

const celEnv = new Environment({ homogeneousAggregateLiterals: false, unlistedVariablesAreDyn: false })
  .registerVariable('object', 'map')
  .registerVariable('session', 'map');

// The permissions a deployment knows, its shipped role grants and its compiled attribute rules,
// checked once at boot: a duplicate or unknown permission, or a rule that does not compile,
// stops the service with the offending entry named.
export class PermissionCatalogue {
  readonly names: ReadonlySet<string>;
  readonly rules: readonly Rule[];
  private readonly roleGrants: ReadonlyMap<string, ReadonlySet<string>>;
  private readonly machineGrants: ReadonlyMap<string, ReadonlySet<string>>;

  constructor(
    readonly settings: AccessSettings,
    // The extensions' groups (kernel/extensions.ts), known as the deployment's are.
    extensionGroups: readonly PermissionGroup[] = [],
  ) {
    const problems: string[] = [];
    const names = new Set<string>(SERVICE_PERMISSIONS);
    for (const group of [...extensionGroups, ...settings.permissionGroups]) {
      for (const p of group.permissions) {
        if (names.has(p)) problems.push(`settings.permissionGroups: permission "${p}" is listed twice (group "${group.groupName}")${SERVICE_PERMISSIONS.has(p) ? ': it is one of the service\'s own' : ''}`);
        names.add(p);
      }
    }
    const known = (where: string, list: readonly string[]) => {
      for (const p of list) if (!names.has(p)) problems.push(`${where}: unknown permission "${p}"`);
    };
    const roles = knownRoles(settings);
    const roleGrants = new Map<string, Set<string>>();
    for (const [role, list] of Object.entries(settings.roleGrants)) {
      if (!roles.has(role)) problems.push(`settings.roleGrants: unknown role "${role}"`);
      if (!Array.isArray(list) || list.some((p) => typeof p !== 'string')) {
        problems.push(`settings.roleGrants.${role}: must be a list of permission names`);
        continue;
      }
      known(`settings.roleGrants.${role}`, list);
      roleGrants.set(role, new Set(list));
    }
    const machineGrants = new Map<string, Set<string>>();
    for (const service of settings.machineTokens.services) {
      known(`settings.machineTokens.services.${service.name}.permissions`, service.permissions ?? []);
      machineGrants.set(service.name, new Set(service.permissions));
    }
    const rules: Rule[] = [];
    for (const rule of settings.attributeRules) {
      known(`settings.attributeRules.${rule.name}`, rule.permissions);
      const compiled = compileWhere(rule.whereClause);
      if ('error' in compiled) problems.push(`settings.attributeRules.${rule.name}: whereClause does not compile: ${compiled.error}`);
      else rules.push({ name: rule.name, dataObject: rule.dataObject, permissions: rule.permissions, where: compiled.where });
    }
    if (problems.length) throw new ConfigError(problems);
    this.names = names;
    this.rules = rules;
    this.roleGrants = roleGrants;
    this.machineGrants = machineGrants;
  }

  isKnown(permission: string): boolean {
    return this.names.has(permission);
  }

  // The service's own route permissions as its routes' role lists give them: the SaaS level's
  // to its administrators, the administrators' to administrator roles, the rest to every role
  // (custom ones included).
  service(roles: readonly string[], permission: string): boolean {
    if (!SERVICE_PERMISSIONS.has(permission)) return false;
    if (SAAS_ADMIN.has(permission)) return roles.some((r) => SAAS_ADMIN_ROLES.includes(r));
    return EVERY_ROLE.has(permission) ? roles.length > 0 : hasAdminRole(roles);
  }

  roleBased(roles: readonly string[], permission: string): boolean {
    return roles.some((r) => this.roleGrants.get(r)?.has(permission));
  }

  machine(service: string, permission: string): boolean {
    return this.machineGrants.get(service)?.has(permission) ?? false;
  }

  // Whether an attribute rule gives `permission` on this object. A rule that fails at run time
  // (a missing field) gives nothing.
  attribute(principal: Principal, permission: string, object: AccessObject): boolean {
    const vars = { object: toCel({ id: object.id ?? '', ...object.data }), session: toCel({ userId: principal.userId ?? '', storeId: principal.storeId ?? '', roles: [...principal.roles] }) };
    return this.rules.some((r) => {
      if (r.dataObject !== object.dataObject || !r.permissions.includes(permission)) return false;
      try {
        return r.where(vars) === true;
      } catch {
        return false;
      }
    });
  }
}

function compileWhere(source: string): { where: Rule['where'] } | { error: string } {
  try {
    const parsed = celEnv.parse(source);
    const checked = parsed.check();
    if (!checked.valid) return { error: String(checked.error?.message ?? checked.error).split('\n')[0] };
    if (!/^(bool|dyn)/.test(checked.type ?? '')) return { error: `must produce a bool, not ${checked.type}` };
    return { where: (vars) => parsed(vars) };
  } catch (error) {
    return { error: (error instanceof Error ? error.message : String(error)).split('\n')[0] };
  }
}

// JSON values into CEL's: whole numbers are CEL ints.
function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value && typeof value === 'object' && !(value instanceof Date)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value instanceof Date ? value.toISOString() : value;
}

export interface Decision {
  canDo: boolean;
  // Objects where the answer differs from `canDo`.
  exceptions: { objectId: string; canDo: boolean }[];
}

// The one decision. Deny by default; absolute roles pass; without `pbacIsActive` so do the
// service's own route permissions its routes' role lists give. For an object, its own grants (deny
// first) come before the general ones; a general deny beats a general allow. `grants` are the
// principal's grants of the permission (its roles, itself, its groups, its store), read fresh.
export function decide(catalogue: PermissionCatalogue, principal: Principal, permission: string, grants: readonly GrantLike[], object?: AccessObject): boolean {
  const s = catalogue.settings;
  if (!s.pbacIsActive || !catalogue.isKnown(permission)) {
    if (principal.kind === 'machine') return false;
    return principal.roles.some((r) => ABSOLUTE_ROLES.includes(r)) || (!s.pbacIsActive && catalogue.service(principal.roles, permission));
  }
  if (principal.kind === 'machine') return catalogue.machine(principal.machine ?? '', permission);
  if (principal.roles.some((r) => ABSOLUTE_ROLES.includes(r))) return true;
  const active = grants.filter((g) => g.permission === permission && typeActive(s, g));
  if (object?.id !== undefined && s.permissionTypes.objectBased) {
    const own = active.filter((g) => g.objectId === object.id);
    if (own.some((g) => !g.canDo)) return false;
    if (own.some((g) => g.canDo)) return true;
  }
  const general = active.filter((g) => g.objectId === null);
  if (general.some((g) => !g.canDo)) return false;
  if (general.some((g) => g.canDo)) return true;
  if (s.permissionTypes.roleBased && catalogue.roleBased(principal.roles, permission)) return true;
  if (catalogue.service(principal.roles, permission)) return true;
  return !!object && s.permissionTypes.attributeBased && catalogue.attribute(principal, permission, object);
}

// A role grant reaches a party through the party's own roles only; the other grants were read
// for its user, its groups and its store.
function reaches(g: GrantLike, party: Principal): boolean {
  return g.roleId === null || party.roles.includes(g.roleId);
}

// The answer when several parties must agree: for an API key, the key (its roles, its permission
// list) and its creator as it is now, so a deny on either reaches the key. No party: denied.
export function decideTogether(catalogue: PermissionCatalogue, parties: readonly Principal[], permission: string, grants: readonly GrantLike[], object?: AccessObject): boolean {
  return (
    parties.length > 0 &&
    parties.every((p) => (!p.permissions?.length || p.permissions.includes(permission)) && decide(catalogue, p, permission, grants.filter((g) => reaches(g, p)), object))
  );
}

function typeActive(s: AccessSettings, g: GrantLike): boolean {
  const t = s.permissionTypes;
  if (g.objectId !== null && !t.objectBased) return false;
  if (g.roleId !== null) return t.roleBased;
  if (g.userId !== null) return t.userBased;
  if (g.groupId !== null) return t.userGroupBased && s.userGroupsActive;
  return t.tenantBased;
}

// The general answer and the objects that are exceptions to it.
export function decideWithExceptions(catalogue: PermissionCatalogue, parties: readonly Principal[], permission: string, grants: readonly GrantLike[]): Decision {
  const canDo = decideTogether(catalogue, parties, permission, grants);
  const ids = [...new Set(grants.filter((g) => g.permission === permission && g.objectId !== null).map((g) => g.objectId!))];
  const exceptions = ids
    .map((objectId) => ({ objectId, canDo: decideTogether(catalogue, parties, permission, grants, { dataObject: '', id: objectId }) }))
    .filter((e) => e.canDo !== canDo);
  return { canDo, exceptions };
}

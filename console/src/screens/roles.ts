import type { Session } from '../api/session';

// The roles a user of the looked-at store may be given: a store's, the root's, or a
// single-organisation deployment's.
export function roleOptions(session: Session): { value: string; label: string }[] {
  const single = session.roles.some((r) => r === 'admin' || r === 'user');
  const roles = single ? ['superAdmin', 'admin', 'user'] : session.target ? ['tenantOwner', 'tenantAdmin', 'tenantUser'] : ['superAdmin', 'saasAdmin', 'saasUser'];
  return roles.map((r) => ({ value: r, label: r }));
}

import type { AuditActor } from '../../kernel/audit.js';
import type { Principal } from '../../kernel/principal.js';

// Who made a change of grants or groups, as the audit log records it.
export function auditActorOf(principal: Principal): AuditActor {
  if (principal.kind === 'machine') return { type: 'machine', id: principal.machine ?? null };
  return { type: principal.kind, id: principal.userId ?? null, roleId: principal.roles[0] ?? null };
}

import { Injectable } from '@nestjs/common';
import type { Tenant } from '../../kernel/tenant.js';
import { SessionService } from '../../identity/session/session.service.js';
import { UserService } from '../../identity/user/user.service.js';
import { AuditQueryService, type SignInSeries } from '../audit/audit-query.service.js';

export interface Overview {
  users: number;
  activeSessions: number;
  signIns: SignInSeries;
}

// The admin console's first screen: three counts, each from the feature that owns it (users,
// sessions, the audit log), asked side by side. Each is one aggregate statement.
@Injectable()
export class OverviewService {
  constructor(
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly audit: AuditQueryService,
  ) {}

  async of(store: Tenant): Promise<Overview> {
    const [users, activeSessions, signIns] = await Promise.all([this.users.count(store.id), this.sessions.countLive(store.id), this.audit.signIns(store.id)]);
    return { users, activeSessions, signIns };
  }
}

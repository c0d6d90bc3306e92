import { Controller, Get } from '@nestjs/common';
import { Authenticated, Principal, Public, RequirePermission, type SvcPrincipal } from '@svc/nest';

// One route of each kind: open to anyone, for any signed-in caller, and behind a permission the
// service decides.
@Controller()
export class ReportsController {
  @Get('health')
  @Public()
  health() {
    return { status: 'OK' };
  }

  @Get('me')
  @Authenticated()
  me(@Principal() principal: SvcPrincipal) {
    return { kind: principal.kind, userId: principal.userId, storeId: principal.storeId, store: principal.store, roles: principal.roles };
  }

  // `users.list` is held by the store's administrators unless a grant says otherwise.
  @Get('reports/users')
  @RequirePermission('users.list')
  usersReport(@Principal() principal: SvcPrincipal) {
    return { storeId: principal.storeId, report: 'only for callers the service lets list users' };
  }
}

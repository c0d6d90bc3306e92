import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { SvcPrincipal } from './principal.js';

// A route open to anyone: no credential is asked for or looked at.
export const Public = Reflector.createDecorator<true>({ transform: () => true });

// A route for any valid caller, a signed-in user or an API key. It is also what a route that
// declares nothing gets: at the service no route is open by accident.
export const Authenticated = Reflector.createDecorator<true>({ transform: () => true });

// The metadata of `@Roles` and `@RequirePermission` (read with Reflector.getAllAndOverride: a
// handler's overrides its controller's).
export const ROLES = Reflector.createDecorator<readonly string[]>();
export const PERMISSIONS = Reflector.createDecorator<readonly string[]>();

// Any one of these roles is enough; a super administrator's login passes them all, as at the service.
export function Roles(...roles: string[]): ClassDecorator & MethodDecorator {
  return ROLES(roles);
}

// Every one of these permissions is needed, as `GET /auth-api/permissions` answers for the caller.
export function RequirePermission(...names: string[]): ClassDecorator & MethodDecorator {
  return PERMISSIONS(names);
}

// The caller the guard admitted; undefined on a public route.
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): SvcPrincipal | undefined => {
  return context.switchToHttp().getRequest<{ principal?: SvcPrincipal }>().principal;
});

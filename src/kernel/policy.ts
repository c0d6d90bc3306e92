import { Reflector } from '@nestjs/core';
import type { PublicRoutesSection } from './policy.settings.js';

// Route policy: every route declares `@Public()` or `@Authenticated({...})`. A route with
// neither fails the boot (PolicyAudit), so nothing is open by accident.
export const Public = Reflector.createDecorator<true>({ transform: () => true });

// Which kinds of caller a route accepts. Required and exhaustive: adding a kind breaks the
// build until every route has decided.
export interface Principals {
  user: boolean;
  apiKey: boolean;
  machine: boolean;
}

export interface AuthPolicy {
  principals: Principals;
  // Any one of these roles is enough; absent means any authenticated caller.
  roles?: readonly string[];
  // The permission the route needs (src/kernel/service-permissions.ts), or null where the caller
  // acts on its own login only (its identity, sessions, inbox, second factor, channels), is a
  // machine, or the handler checks the object itself. Required, so the route-policy snapshot
  // shows every route's permission. Without `pbacIsActive` the role list decides; with it, the
  // permission does (through can()).
  permission: string | null;
  // The avatar bucket also takes the login's `userBucketToken`.
  bucketToken?: boolean;
  // Open to anyone when this setting is true (POST /users with userRegisterIsPublic).
  publicWhen?: keyof PublicRoutesSection;
  // `/currentuser` answers 401 in its own shape: `{ status: 'ERR', message: 'No login found' }`.
  noLoginShape?: boolean;
  // Open to a login whose second factor is pending (`/currentuser`, the 2FA routes); every
  // other route answers 403 EmailTwoFactorNeeded / MobileTwoFactorNeeded until it is done.
  during2FA?: boolean;
  // Open to a login whose role requires an app factor it has not enrolled yet
  // (mfaRequiredForRoles): the enrolment routes. Second factors still pending close it.
  mfaEnrollment?: boolean;
  // A SaaS administrator may target any store here, as a super administrator may everywhere
  // (the audit log: SaaS operators read every store's).
  saasAdminTargetsAnyStore?: boolean;
}

export const Authenticated = Reflector.createDecorator<AuthPolicy>();

export const USER_ONLY: Principals = { user: true, apiKey: false, machine: false };

// A key acts as its creator with at most the creator's current roles: it goes where a login of
// those roles goes, except where keys are created or deleted and passwords changed.
export const USER_OR_API_KEY: Principals = { user: true, apiKey: true, machine: false };

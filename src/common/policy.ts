import { Reflector } from '@nestjs/core';

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
  permission?: string;
  // The avatar bucket also takes the login's `userBucketToken`.
  bucketToken?: boolean;
  // Open to anyone when this setting is true (POST /users with userRegisterIsPublic).
  publicWhen?: 'userRegisterIsPublic';
  // `/currentuser` answers 401 in its own shape: `{ status: 'ERR', message: 'No login found' }`.
  noLoginShape?: boolean;
}

export const Authenticated = Reflector.createDecorator<AuthPolicy>();

export const USER_ONLY: Principals = { user: true, apiKey: false, machine: false };

// What a request knows of its login: the session as cached, composed from the session row and
// the user it belongs to.
export interface SessionData {
  sessionId: string;
  userId: string;
  storeId: string;
  roles: string[];
  email: string | null;
  mobile: string | null;
  fullname: string | null;
  // ISO time; the token's `exp` is the same instant.
  expiresAt: string;
  // Present (true) while a second factor of the login is pending.
  sessionNeedsEmail2FA?: boolean;
  sessionNeedsMobile2FA?: boolean;
  // Present (true) while the authenticator-app factor (TOTP, or a recovery code) is pending.
  sessionNeedsTotp2FA?: boolean;
  // Present (true) while a passkey may complete the sign-in (the user has one). Beside the app's
  // flag when the user has both: either factor completes it.
  sessionNeedsPasskey2FA?: boolean;
  // Present (true) while the user holds a role of `mfaRequiredForRoles` without an app factor
  // (TOTP or passkey): only the enrolment routes answer until one is added.
  mfaEnrollmentNeeded?: boolean;
  // How the caller authenticated: a login (default) or an API key (sessionId is the key's id).
  principal?: 'user' | 'apiKey';
  // An API key made with a list of permissions acts with those only (and never beyond its
  // creator's); absent or empty: all of its creator's.
  permissions?: string[];
  // The single sign-on provider's user id, when the session began there.
  ssoUserId?: string;
  // What the sign-in proved so far (assurance.ts), and when its last factor was proved (ISO).
  // Absent in sessions begun before these were kept.
  amr?: string[];
  authTime?: string;
}

export interface SessionMeta {
  ip?: string;
  userAgent?: string;
  // Single sign-on: the provider's user id, and its own session lifetime.
  ssoUserId?: string;
  lifetimeMs?: number;
}

// Second factors a new login still has to complete.
export interface PendingFactors {
  email2FA: boolean;
  mobile2FA: boolean;
  // The user has an authenticator app (TOTP) or a passkey: a sign-in by password, code or
  // provider must also pass one of them.
  totp2FA?: boolean;
  passkey2FA?: boolean;
}

// Who is asking, in the one shape every feature's decisions take: a user's login, an API key
// (acting for its creator, with its own permissions when it lists them), or a calling service.
export interface Principal {
  kind: 'user' | 'apiKey' | 'machine';
  storeId?: string;
  userId?: string;
  roles: readonly string[];
  machine?: string;
  permissions?: readonly string[];
}

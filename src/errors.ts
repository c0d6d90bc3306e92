import { errorCodes, errorDefinition, errorSets, registerErrors, type ErrCode, type ErrorDefinition } from './kernel/errors.js';
import { ACCESS_ERRORS } from './identity/access/access.errors.js';
import { ANTIBOT_ERRORS } from './identity/antibot/antibot.errors.js';
import { API_KEY_ERRORS } from './identity/apikey/api-key.errors.js';
import { AUTH_ERRORS } from './identity/auth/auth.errors.js';
import { BUCKET_ERRORS } from './identity/bucket/bucket.errors.js';
import { OAUTH_CLIENT_ERRORS } from './identity/oauth-client/oauth-client.errors.js';
import { OIDC_PROVIDER_ERRORS } from './identity/oidc-provider/oidc-provider.errors.js';
import { MFA_ERRORS } from './identity/mfa/mfa.errors.js';
import { M2M_ERRORS } from './identity/m2m/m2m.errors.js';
import { PASSKEY_ERRORS } from './identity/passkey/passkey.errors.js';
import { PASSWORDLESS_ERRORS } from './identity/passwordless/passwordless.errors.js';
import { PASSWORD_POLICY_ERRORS } from './identity/password-policy/password-policy.errors.js';
import { REGISTRATION_ERRORS } from './identity/registration/registration.errors.js';
import { REMOTE_SESSION_ERRORS } from './identity/remote-session/remote-session.errors.js';
import { SESSION_ERRORS } from './identity/session/session.errors.js';
import { SOCIAL_ERRORS } from './identity/social/social.errors.js';
import { SSO_ERRORS } from './identity/sso/sso.errors.js';
import { STORE_ERRORS } from './identity/store/store.errors.js';
import { TENANCY_ERRORS } from './identity/tenancy/tenancy.errors.js';
import { TOKEN_ERRORS } from './identity/token/token.errors.js';
import { USER_ADMIN_ERRORS } from './identity/user-admin/user-admin.errors.js';
import { USER_ERRORS } from './identity/user/user.errors.js';
import { VERIFICATION_ERRORS } from './identity/verification/verification.errors.js';
import { EVENTS_ERRORS } from './channels/events/events.errors.js';
import { WEBHOOK_ERRORS } from './channels/webhooks/webhooks.errors.js';
import { REALTIME_ERRORS } from './channels/realtime/realtime.errors.js';
import { AUDIT_ERRORS } from './operations/audit/audit.errors.js';
import { CONSOLE_ERRORS } from './operations/console/console.errors.js';

// The one error catalogue: the kernel's codes, then every feature's `<feature>.errors.ts`, in the
// order docs/errors.md lists them (npm run docs:errors). A feature that declares codes is added
// here; src/errors.spec.ts fails while one is missing.
registerErrors(
  TENANCY_ERRORS,
  STORE_ERRORS,
  REGISTRATION_ERRORS,
  USER_ERRORS,
  PASSWORD_POLICY_ERRORS,
  AUTH_ERRORS,
  TOKEN_ERRORS,
  SESSION_ERRORS,
  M2M_ERRORS,
  API_KEY_ERRORS,
  OAUTH_CLIENT_ERRORS,
  OIDC_PROVIDER_ERRORS,
  USER_ADMIN_ERRORS,
  VERIFICATION_ERRORS,
  PASSWORDLESS_ERRORS,
  PASSKEY_ERRORS,
  MFA_ERRORS,
  ANTIBOT_ERRORS,
  SOCIAL_ERRORS,
  SSO_ERRORS,
  REMOTE_SESSION_ERRORS,
  BUCKET_ERRORS,
  EVENTS_ERRORS,
  WEBHOOK_ERRORS,
  REALTIME_ERRORS,
  ACCESS_ERRORS,
  AUDIT_ERRORS,
  CONSOLE_ERRORS,
);

export const ERROR_CATALOGUE: Readonly<Record<ErrCode, ErrorDefinition>> = Object.fromEntries(errorCodes().map((code) => [code, errorDefinition(code)])) as Record<ErrCode, ErrorDefinition>;

export const ERROR_SETS = errorSets();

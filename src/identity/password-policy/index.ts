// The password policy, for the features that set or accept passwords.
export { PasswordPolicyModule } from './password-policy.module.js';
export { lengthViolation, PASSWORD_MAX_BYTES, PasswordPolicyService, type PasswordRules, type PasswordSubject } from './password-policy.service.js';

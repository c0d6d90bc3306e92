import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import type { DualIdentifierRegistration, PrimaryLoginIdentifier, SecondaryIdentifierPresence } from './user.settings.js';
import { checkIdentifiers, identifierPresence, type IdentifierPresence, type Presence } from './identifier-rules.js';

describe('identifierPresence', () => {
  // primary × secondary × dual → email, mobile, atLeastOne
  it.each<[PrimaryLoginIdentifier, SecondaryIdentifierPresence, DualIdentifierRegistration, Presence, Presence, boolean]>([
    ['email', 'none', 'atLeastOne', 'required', 'absent', false],
    ['email', 'none', 'both', 'required', 'absent', false],
    ['email', 'optional', 'atLeastOne', 'required', 'optional', false],
    ['email', 'optional', 'both', 'required', 'optional', false],
    ['email', 'required', 'atLeastOne', 'required', 'required', false],
    ['email', 'required', 'both', 'required', 'required', false],
    ['mobile', 'none', 'atLeastOne', 'absent', 'required', false],
    ['mobile', 'none', 'both', 'absent', 'required', false],
    ['mobile', 'optional', 'atLeastOne', 'optional', 'required', false],
    ['mobile', 'optional', 'both', 'optional', 'required', false],
    ['mobile', 'required', 'atLeastOne', 'required', 'required', false],
    ['mobile', 'required', 'both', 'required', 'required', false],
    ['emailOrMobile', 'none', 'atLeastOne', 'optional', 'optional', true],
    ['emailOrMobile', 'none', 'both', 'required', 'required', false],
    ['emailOrMobile', 'optional', 'atLeastOne', 'optional', 'optional', true],
    ['emailOrMobile', 'optional', 'both', 'required', 'required', false],
    ['emailOrMobile', 'required', 'atLeastOne', 'optional', 'optional', true],
    ['emailOrMobile', 'required', 'both', 'required', 'required', false],
  ])('primary %s, secondary %s, dual %s → email %s, mobile %s, atLeastOne %s', (primary, secondary, dual, email, mobile, atLeastOne) => {
    const presence = identifierPresence({
      primaryLoginIdentifier: primary,
      secondaryIdentifierPresence: secondary,
      dualIdentifierRegistration: dual,
    });
    expect(presence).toEqual({ email, mobile, atLeastOne });
  });
});

describe('checkIdentifiers', () => {
  const presence = (email: Presence, mobile: Presence, atLeastOne = false): IdentifierPresence => ({ email, mobile, atLeastOne });
  const EMAIL = 'a@example.com';
  const MOBILE = '+14155552671';

  function thrown(fn: () => void): AppError {
    try {
      fn();
    } catch (e) {
      return e as AppError;
    }
    throw new Error('expected an AppError');
  }

  it.each<[string, IdentifierPresence, { email?: string | null; mobile?: string | null }, string, string]>([
    ['required email missing', presence('required', 'absent'), { mobile: null }, 'IdentifierRequired', 'email is required'],
    ['required mobile missing', presence('absent', 'required'), { email: undefined }, 'IdentifierRequired', 'mobile is required'],
    ['both required, mobile missing', presence('required', 'required'), { email: EMAIL }, 'IdentifierRequired', 'mobile is required'],
    ['absent mobile sent', presence('required', 'absent'), { email: EMAIL, mobile: MOBILE }, 'IdentifierNotAccepted', 'mobile is not accepted by this service'],
    ['absent email sent', presence('absent', 'required'), { email: EMAIL, mobile: MOBILE }, 'IdentifierNotAccepted', 'email is not accepted by this service'],
    ['atLeastOne, neither sent', presence('optional', 'optional', true), { email: null, mobile: null }, 'IdentifierRequired', 'email or mobile is required'],
    ['atLeastOne, nothing given', presence('optional', 'optional', true), {}, 'IdentifierRequired', 'email or mobile is required'],
  ])('refuses: %s', (_case, p, sent, errCode, message) => {
    const error = thrown(() => checkIdentifiers(p, sent));
    expect(error).toBeInstanceOf(AppError);
    expect(error.errCode).toBe(errCode);
    expect(error.status).toBe(400);
    expect(error.message).toBe(message);
  });

  it.each<[string, IdentifierPresence, { email?: string | null; mobile?: string | null }]>([
    ['email only, mobile absent', presence('required', 'absent'), { email: EMAIL, mobile: null }],
    ['email required, optional mobile omitted', presence('required', 'optional'), { email: EMAIL }],
    ['email required, optional mobile sent', presence('required', 'optional'), { email: EMAIL, mobile: MOBILE }],
    ['mobile only, email absent', presence('absent', 'required'), { mobile: MOBILE }],
    ['both required and sent', presence('required', 'required'), { email: EMAIL, mobile: MOBILE }],
    ['atLeastOne, email only', presence('optional', 'optional', true), { email: EMAIL }],
    ['atLeastOne, mobile only', presence('optional', 'optional', true), { mobile: MOBILE }],
    ['atLeastOne, both', presence('optional', 'optional', true), { email: EMAIL, mobile: MOBILE }],
  ])('accepts: %s', (_case, p, sent) => {
    expect(() => checkIdentifiers(p, sent)).not.toThrow();
  });
});

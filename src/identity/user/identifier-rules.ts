import { AppError } from '../../kernel/errors.js';
import type { DualIdentifierRegistration, PrimaryLoginIdentifier, SecondaryIdentifierPresence } from './user.settings.js';

export interface IdentifierSettings {
  primaryLoginIdentifier: PrimaryLoginIdentifier;
  secondaryIdentifierPresence: SecondaryIdentifierPresence;
  dualIdentifierRegistration: DualIdentifierRegistration;
}

// How registration treats one identifier: must be sent, may be sent, or is not part of the model.
export type Presence = 'required' | 'optional' | 'absent';

export interface IdentifierPresence {
  email: Presence;
  mobile: Presence;
  // emailOrMobile with atLeastOne: both optional, but one of them must be sent.
  atLeastOne: boolean;
}

const SECONDARY: Record<SecondaryIdentifierPresence, Presence> = { none: 'absent', optional: 'optional', required: 'required' };

// The spec's table of login-identifier settings, as one function.
export function identifierPresence(s: IdentifierSettings): IdentifierPresence {
  switch (s.primaryLoginIdentifier) {
    case 'email':
      return { email: 'required', mobile: SECONDARY[s.secondaryIdentifierPresence], atLeastOne: false };
    case 'mobile':
      return { email: SECONDARY[s.secondaryIdentifierPresence], mobile: 'required', atLeastOne: false };
    case 'emailOrMobile':
      return s.dualIdentifierRegistration === 'both'
        ? { email: 'required', mobile: 'required', atLeastOne: false }
        : { email: 'optional', mobile: 'optional', atLeastOne: true };
  }
}

// Refuses a registration whose identifiers do not fit the settings; names the field.
export function checkIdentifiers(presence: IdentifierPresence, sent: { email?: string | null; mobile?: string | null }): void {
  for (const field of ['email', 'mobile'] as const) {
    const given = sent[field] != null;
    if (presence[field] === 'required' && !given) throw new AppError('IdentifierRequired', `${field} is required`);
    if (presence[field] === 'absent' && given) throw new AppError('IdentifierNotAccepted', `${field} is not accepted by this service`);
  }
  if (presence.atLeastOne && sent.email == null && sent.mobile == null) {
    throw new AppError('IdentifierRequired', 'email or mobile is required');
  }
}

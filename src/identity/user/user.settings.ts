import { IsIn, IsOptional, Matches } from 'class-validator';

export const PRIMARY_IDENTIFIERS = ['email', 'mobile', 'emailOrMobile'] as const;

export const SECONDARY_PRESENCES = ['none', 'optional', 'required'] as const;

export const DUAL_REGISTRATIONS = ['atLeastOne', 'both'] as const;

export const USER_NAME_TYPES = ['asFullname', 'asNamePair'] as const;

export type PrimaryLoginIdentifier = (typeof PRIMARY_IDENTIFIERS)[number];

export type SecondaryIdentifierPresence = (typeof SECONDARY_PRESENCES)[number];

export type DualIdentifierRegistration = (typeof DUAL_REGISTRATIONS)[number];

export type UserNameType = (typeof USER_NAME_TYPES)[number];

// How users are identified and named.
export class UserSection {
  @IsIn(PRIMARY_IDENTIFIERS)
  primaryLoginIdentifier: PrimaryLoginIdentifier;

  @IsIn(SECONDARY_PRESENCES)
  secondaryIdentifierPresence: SecondaryIdentifierPresence;

  @IsIn(DUAL_REGISTRATIONS)
  dualIdentifierRegistration: DualIdentifierRegistration;

  @IsIn(USER_NAME_TYPES)
  userNameType: UserNameType;

  // Region used to read mobile numbers written without a leading `+` (ISO 3166 alpha-2), or null.
  @IsOptional()
  @Matches(/^[A-Z]{2}$/)
  defaultMobileRegion: string | null;
}

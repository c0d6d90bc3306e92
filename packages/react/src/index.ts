export { SvcProvider, useClient, useSession, type SvcProviderProps, type SessionState } from './provider.js';
export { useUser, type UserState, type CurrentUser } from './use-user.js';
export { useEvents, type UseEventsOptions, type EventsState } from './use-events.js';
export { PasswordSignIn, type PasswordSignInProps } from './password-sign-in.js';
export { TotpStep, type TotpStepProps } from './totp-step.js';
export { PasskeyButton, type PasskeyButtonProps, type PasskeyEnrolled } from './passkey-button.js';
export type { FormatError } from './task.js';

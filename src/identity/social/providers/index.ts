import { apple } from './apple.js';
import { facebook } from './facebook.js';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { google } from './google.js';
import type { SocialProviderKind } from './kind.js';
import { linkedin } from './linkedin.js';
import { microsoft } from './microsoft.js';
import { oidc } from './oidc.js';

// The built-in providers, configured under their own names in `socialLogin.providers`.
export const BUILT_IN_PROVIDERS: ReadonlyMap<string, SocialProviderKind> = new Map([google, apple, facebook, microsoft, linkedin, gitlab, github].map((k) => [k.key, k]));

// The generic kinds, configured under any other name with their `type`.
export const GENERIC_PROVIDERS: ReadonlyMap<string, SocialProviderKind> = new Map([oidc].map((k) => [k.key, k]));

import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { resolveSecret } from '../../platform/config/secrets.js';
import { SocialSection, type SocialLoginSettings, type SocialProviderEntry, type SsoSettings } from './social.settings.js';

// An enabled provider of the settings with the secrets it names read from the environment.
export interface ResolvedProvider {
  name: string;
  setting: SocialProviderEntry;
  clientSecret?: string;
  privateKey?: string;
}

export interface ResolvedSocialLogin {
  providers: Map<string, ResolvedProvider>;
  // Where a sign-in that names no address lands: `redirectUrl`, else the first of
  // `redirectUrls`, else `{FRONTEND_URL}/auth/callback`.
  redirectUrl?: string;
  // Every address the browser may be sent back to, the default first; a sign-in names one exactly.
  redirectUrls: string[];
}

// Enabled providers with the secrets they name, checked at boot: a secret named but missing from
// the environment stops the boot with the provider named (in `problems`, reported by BootChecks).
// Which settings a provider needs is its own file's check (src/identity/social/providers/).
export function resolveSocialLogin(
  settings: SocialLoginSettings,
  frontendUrl: string | undefined,
  env: (name: string) => string | undefined,
  problems: string[],
): ResolvedSocialLogin {
  const providers = new Map<string, ResolvedProvider>();
  let enabled = 0;
  for (const [name, setting] of settings.providers ?? []) {
    if (!setting?.enabled) continue;
    enabled++;
    const before = problems.length;
    const path = `settings.socialLogin.providers.${name}`;
    const resolved: ResolvedProvider = { name, setting };
    if (setting.clientSecret !== undefined) resolved.clientSecret = resolveSecret(setting.clientSecret, `${path}.clientSecret`, env, problems);
    if ('privateKey' in setting && setting.privateKey !== undefined) resolved.privateKey = resolveSecret(setting.privateKey, `${path}.privateKey`, env, problems);
    // Only a complete provider is built; the boot stops on the others anyway.
    if (problems.length === before) providers.set(name, resolved);
  }
  // The configured addresses; FRONTEND_URL's callback only when none is configured.
  const configured = [...new Set([...(settings.redirectUrl ? [settings.redirectUrl] : []), ...(settings.redirectUrls ?? [])])];
  const redirectUrls = configured.length ? configured : frontendUrl ? [`${frontendUrl.replace(/\/$/, '')}/auth/callback`] : [];
  const redirectUrl = redirectUrls[0];
  if (enabled && !redirectUrl) problems.push('settings.socialLogin.redirectUrls or settings.socialLogin.redirectUrl or FRONTEND_URL is required when a social provider is enabled');
  return { providers, redirectUrl, redirectUrls };
}

export interface ResolvedSso {
  settings: SsoSettings;
  clientSecret: string;
}

// The `sso` settings with the client secret read, checked at boot (problems into `problems`);
// null when SSO is off or its secret is missing.
export function resolveSso(
  settings: SsoSettings | null,
  opts: { clientRedirect?: string; production: boolean },
  env: (name: string) => string | undefined,
  problems: string[],
): ResolvedSso | null {
  if (!settings) return null;
  const before = problems.length;
  const clientSecret = resolveSecret(settings.clientSecret, 'settings.sso.clientSecret', env, problems);
  if (!opts.clientRedirect) problems.push('settings.socialLogin.redirectUrls or settings.socialLogin.redirectUrl or FRONTEND_URL is required when sso is configured');
  // Plain http is for a provider on this machine in development and tests.
  if (opts.production && settings.tokenHost.startsWith('http:')) problems.push('settings.sso.tokenHost must be https in production');
  return problems.length > before ? null : { settings, clientSecret: clientSecret! };
}

// The enabled providers and single sign-on with their secrets read from the environment, once
// per app: a secret the environment lacks is reported with every module's settings problems.
@Injectable()
export class SocialSecrets {
  readonly socialLogin: ResolvedSocialLogin;
  readonly sso: ResolvedSso | null;

  constructor(config: AppConfig, checks: BootChecks) {
    const problems: string[] = [];
    const { socialLogin, sso } = config.section(SocialSection);
    this.socialLogin = resolveSocialLogin(socialLogin, config.env.FRONTEND_URL, config.secretFromEnv, problems);
    this.sso = resolveSso(sso, { clientRedirect: this.socialLogin.redirectUrl, production: config.env.NODE_ENV === 'production' }, config.secretFromEnv, problems);
    checks.report(problems);
  }
}

import type { Clock } from '../clock/clock.js';
import { loadEnv, type EnvVars } from './env.js';
import { loadSettingsWithSections, type SectionValues, type ServiceSettings, type SettingsOverrides, type SettingsSection } from './settings.js';
import { resolveSocialLogin, resolveSso, type ResolvedSocialLogin, type ResolvedSso } from './social-secrets.js';

export interface ConfigSources {
  // Environment to read; `process.env` when omitted.
  env?: Record<string, string | undefined>;
  // Settings applied over the settings file (tests, embedding).
  settings?: SettingsOverrides & Record<string, unknown>;
  // Time as the service sees it (tests move it).
  clock?: Clock;
  // Where log lines go; stdout when omitted (tests read them).
  logStream?: { write(line: string): void };
  // Further Nest modules to mount (tests mount probe routes that declare permissions).
  imports?: unknown[];
  // Settings sections beyond the service's own (extensions'), each under its own key.
  sections?: readonly SettingsSection[];
}

// The validated configuration: environment (infrastructure, secrets) and service settings
// (behaviour). Built once, before Nest starts, so a bad key stops the boot with its name.
export class AppConfig {
  // Enabled social providers and single sign-on with their secrets read from the environment.
  readonly socialLogin: ResolvedSocialLogin;
  readonly sso: ResolvedSso | null;
  // Secrets the settings name but the environment lacks: reported with every module's settings
  // problems in one ConfigError at boot (BootChecks), not on their own.
  readonly problems: readonly string[];

  private constructor(
    readonly env: EnvVars,
    readonly settings: ServiceSettings,
    private readonly source: Record<string, string | undefined>,
    private readonly sectionValues: SectionValues = new Map(),
  ) {
    const problems: string[] = [];
    this.socialLogin = resolveSocialLogin(settings.socialLogin, env.FRONTEND_URL, this.secretFromEnv, problems);
    this.sso = resolveSso(settings.sso, { clientRedirect: this.socialLogin.redirectUrl, production: env.NODE_ENV === 'production' }, this.secretFromEnv, problems);
    this.problems = problems;
  }

  static load(sources: ConfigSources = {}): AppConfig {
    const source = sources.env ?? process.env;
    const env = loadEnv(source);
    const loaded = loadSettingsWithSections(env.SERVICE_SETTINGS, sources.settings, env.NODE_ENV, sources.sections ?? []);
    return new AppConfig(env, loaded.settings, source, loaded.sections);
  }

  // An added section's validated value, by its class.
  section<T extends object>(schema: new () => T): T {
    const value = this.sectionValues.get(schema);
    if (!value) throw new Error(`no settings section is declared with ${schema.name}`);
    return value as T;
  }

  // A variable named by the settings file (`{ "env": "SMTP_PASSWORD" }`): provider credentials
  // stay in the environment, out of the repository.
  readonly secretFromEnv = (name: string): string | undefined => this.source[name];

  get docsEnabled(): boolean {
    return this.env.DOCS_ENABLED ?? this.env.NODE_ENV !== 'production';
  }

  get embeddedDatabase(): boolean {
    return !this.env.DATABASE_URL;
  }

  // Prefix for links to the service's own resources (avatars): absolute when PUBLIC_URL is set.
  publicUrl(path: string): string {
    return (this.env.PUBLIC_URL?.replace(/\/$/, '') ?? '') + path;
  }

  // An absolute link: from PUBLIC_URL, else from the address the request was sent to.
  absoluteUrl(path: string, requestOrigin: string): string {
    return (this.env.PUBLIC_URL?.replace(/\/$/, '') ?? requestOrigin) + path;
  }
}

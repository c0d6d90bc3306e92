import type { Clock } from '../clock/clock.js';
import { loadEnv, type EnvVars } from './env.js';
import { loadSettings, type ServiceSettings, type SettingsOverrides } from './settings.js';

export interface ConfigSources {
  // Environment to read; `process.env` when omitted.
  env?: Record<string, string | undefined>;
  // Settings applied over the settings file (tests, embedding).
  settings?: SettingsOverrides;
  // Time as the service sees it (tests move it).
  clock?: Clock;
}

// The validated configuration: environment (infrastructure, secrets) and service settings
// (behaviour). Built once, before Nest starts, so a bad key stops the boot with its name.
export class AppConfig {
  private constructor(
    readonly env: EnvVars,
    readonly settings: ServiceSettings,
    private readonly source: Record<string, string | undefined>,
  ) {}

  static load(sources: ConfigSources = {}): AppConfig {
    const source = sources.env ?? process.env;
    const env = loadEnv(source);
    return new AppConfig(env, loadSettings(env.SERVICE_SETTINGS, sources.settings), source);
  }

  // A variable named by the settings file (`{ "env": "SMTP_PASSWORD" }`): provider credentials
  // stay in the environment, out of the repository.
  readonly secretFromEnv = (name: string): string | undefined => this.source[name];

  get embeddedDatabase(): boolean {
    return !this.env.DATABASE_URL;
  }

  // Prefix for links to the service's own resources (avatars): absolute when PUBLIC_URL is set.
  publicUrl(path: string): string {
    return (this.env.PUBLIC_URL?.replace(/\/$/, '') ?? '') + path;
  }
}

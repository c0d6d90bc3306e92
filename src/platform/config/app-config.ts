import type { Clock } from '../clock/clock.js';
import { loadEnv, type EnvVars } from './env.js';
import { flatSettings, loadSections, type SectionValues, type SettingsInput, type SettingsOf, type SettingsSchema, type SettingsSection } from './settings.js';

export interface ConfigSources {
  // Environment to read; `process.env` when omitted.
  env?: Record<string, string | undefined>;
  // Settings applied over the settings file (tests, embedding).
  settings?: SettingsInput;
  // Time as the service sees it (tests move it).
  clock?: Clock;
  // Where log lines go; stdout when omitted (tests read them).
  logStream?: { write(line: string): void };
  // Further Nest modules to mount (tests mount probe routes that declare permissions).
  imports?: unknown[];
  // The sections of the settings file: the service's own, composed at the root (src/settings.ts),
  // and extensions', each under its own key.
  sections?: readonly SettingsSection[];
}

// The validated configuration: environment (infrastructure, secrets) and the settings file's
// sections (behaviour), each read by its class. Built once, before Nest starts, so a bad key
// stops the boot with its name.
export class AppConfig {
  protected constructor(
    readonly env: EnvVars,
    private readonly source: Record<string, string | undefined>,
    private readonly sectionValues: SectionValues,
  ) {}

  static load(sources: ConfigSources = {}): AppConfig {
    const { env, source, values } = AppConfig.read(sources);
    return new AppConfig(env, source, values);
  }

  // What a configuration is built from, for a composition that adds its own view of it.
  protected static read(sources: ConfigSources): { env: EnvVars; source: Record<string, string | undefined>; values: SectionValues } {
    const source = sources.env ?? process.env;
    const env = loadEnv(source);
    const values = loadSections(env.SERVICE_SETTINGS, sources.settings, env.NODE_ENV, sources.sections ?? []);
    return { env, source, values };
  }

  // A section's validated value, by its class: `config.section(PagingSection).paging`.
  section<T extends object>(schema: SettingsSchema<T>): T {
    const value = this.sectionValues.get(schema);
    if (!value) throw new Error(`no settings section is declared with ${schema.name}`);
    // The map holds, under each class, what plainToInstance made of it: an instance of that class.
    return value as T;
  }

  // The top-level sections of a list as one object (the root's view of the whole file).
  protected merged<S extends readonly SettingsSection[]>(sections: S): SettingsOf<S> {
    return flatSettings(this.sectionValues, sections);
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

import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { isGenericProvider, RESERVED_PROVIDER_NAMES, SOCIAL_PROVIDER_NAME } from './social.settings.js';
import type { SocialProvider } from './social-provider.js';
import type { SocialSecrets } from './social-secrets.js';
import { BUILT_IN_PROVIDERS, GENERIC_PROVIDERS } from './providers/index.js';
import { SocialSection } from './social.settings.js';

// A provider's return by form post: `/auth-api/auth/<name>/callback`.
const CALLBACK_PATH = /^\/auth-api\/auth\/([^/]+)\/callback$/;

// Every sign-in provider the service answers for, by name: those the settings enable (a built-in
// provider, or a generic one by its `type`), built at boot, and those extensions register in code
// from their module's onModuleInit. Social login starts and finishes through it only.
@Injectable()
export class SocialProviderRegistry {
  private readonly providers = new Map<string, SocialProvider>();
  private readonly configured = new Set<string>();

  private constructor(private readonly checks: BootChecks) {}

  // The providers the settings enable, their strategy or client loaded; what an entry lacks is
  // reported with every module's settings problems (one ConfigError at boot).
  static async fromSettings(config: AppConfig, checks: BootChecks, secrets: SocialSecrets): Promise<SocialProviderRegistry> {
    const registry = new SocialProviderRegistry(checks);
    const problems: string[] = [];
    // Every entry, enabled or not: a name that is neither built in nor typed is a mistake.
    for (const [name, setting] of config.section(SocialSection).socialLogin.providers ?? []) {
      if (!setting || typeof setting !== 'object' || isGenericProvider(setting) || BUILT_IN_PROVIDERS.has(name)) continue;
      problems.push(
        `settings.socialLogin.providers.${name}: no built-in provider is named ${name} (built in: ${[...BUILT_IN_PROVIDERS.keys()].join(', ')}); a generic OpenID Connect provider has "type": "oidc"`,
      );
    }
    for (const [name, entry] of secrets.socialLogin.providers) {
      const path = `settings.socialLogin.providers.${name}`;
      const kind = isGenericProvider(entry.setting) ? GENERIC_PROVIDERS.get(entry.setting.type) : BUILT_IN_PROVIDERS.get(name);
      if (!kind) continue;
      const missing = kind.check(entry, path, config);
      if (missing.length) {
        problems.push(...missing);
        continue;
      }
      registry.providers.set(name, await kind.create(entry, config));
      registry.configured.add(name);
    }
    checks.report(problems);
    return registry;
  }

  // An extension's provider, from its module's onModuleInit (before the boot's checks end): a
  // name that is not a provider name, or is taken, stops the boot.
  register(provider: SocialProvider): void {
    const { name } = provider;
    if (typeof name !== 'string' || !SOCIAL_PROVIDER_NAME.test(name) || RESERVED_PROVIDER_NAMES.includes(name)) {
      return this.checks.report([
        `sign-in provider "${String(name)}" registered in code: a name is lowercase letters, digits, _ and -, at most 32 characters, and not ${RESERVED_PROVIDER_NAMES.join(', ')}`,
      ]);
    }
    if (this.configured.has(name)) return this.checks.report([`settings.socialLogin.providers.${name}: an extension registers a sign-in provider of the same name`]);
    if (this.providers.has(name)) return this.checks.report([`sign-in provider "${name}" is registered twice in code`]);
    this.providers.set(name, provider);
  }

  get(name: string): SocialProvider | undefined {
    return this.providers.get(name);
  }

  names(): string[] {
    return [...this.providers.keys()];
  }

  // Whether a request to `path` may carry a form body: the callback of a provider that returns
  // with a form post.
  takesFormPost(path: string): boolean {
    const name = CALLBACK_PATH.exec(path)?.[1];
    return !!name && !!this.providers.get(name)?.formPostCallback;
  }
}

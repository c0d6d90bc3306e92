import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadEnv } from './env.js';
// The mechanism, over the service's own sections (src/settings.ts).
import { loadSettings, ServiceConfig as AppConfig, type SettingsOverrides } from '../../settings.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-auth-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeSettings(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadEnv', () => {
  it('applies the defaults to an empty environment', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(loadEnv({})).toMatchObject({
      NODE_ENV: 'development',
      PORT: 3000,
      HOST: '0.0.0.0',
      DATA_DIR: './data',
      PROJECT_CODENAME: 'svc',
      SERVICE_CODENAME: 'auth',
      BCRYPT_COST: 12,
      LOG_LEVEL: 'info',
      APP_VERSION: pkg.version,
    });
    expect(loadEnv({}).DATABASE_URL).toBeUndefined();
  });

  it('reads given values, numbers as numbers', () => {
    const env = loadEnv({ PORT: '8080', BCRYPT_COST: '4', DATABASE_URL: 'postgresql://u@db/x', LOG_LEVEL: 'debug', OTHER: 'ignored' });
    expect(env).toMatchObject({ PORT: 8080, BCRYPT_COST: 4, DATABASE_URL: 'postgresql://u@db/x', LOG_LEVEL: 'debug' });
    expect(env).not.toHaveProperty('OTHER');
  });

  it('treats an empty optional value as unset', () => {
    expect(loadEnv({ DATABASE_URL: '', REDIS_URL: '' })).toMatchObject({ DATABASE_URL: undefined, REDIS_URL: undefined });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['NODE_ENV', 'prod'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'localhost:6379'],
    ['PUBLIC_URL', 'example.com'],
    ['BCRYPT_COST', '2'],
    ['BCRYPT_COST', '16'],
    ['PROJECT_CODENAME', 'My Project'],
  ])('refuses %s=%s, naming the key', (key, value) => {
    expect(configError(() => loadEnv({ [key]: value })).message).toContain(`${key}=`);
  });

  it('reads earlier KEY_ENCRYPTION_SECRET values, and refuses one too short without printing it', () => {
    expect(loadEnv({ KEY_ENCRYPTION_SECRET: 'the current secret value', KEY_ENCRYPTION_SECRET_PREVIOUS: 'an earlier secret value,the one before that' }).KEY_ENCRYPTION_SECRET_PREVIOUS).toBe('an earlier secret value,the one before that');
    const message = configError(() => loadEnv({ KEY_ENCRYPTION_SECRET_PREVIOUS: 'an earlier secret value,short' })).message;
    expect(message).toContain('KEY_ENCRYPTION_SECRET_PREVIOUS=');
    expect(message).not.toContain('an earlier secret value');
    expect(configError(() => loadEnv({ KEY_ENCRYPTION_SECRET: 'too short' })).message).not.toContain('too short');
  });

  it('lists every bad key at once', () => {
    const message = configError(() => loadEnv({ PORT: '70000', LOG_LEVEL: 'loud' })).message;
    expect(message).toContain('PORT=');
    expect(message).toContain('LOG_LEVEL=');
  });
});

describe('loadSettings', () => {
  it('gives the shipped defaults without a file', () => {
    const settings = loadSettings(undefined);
    expect(settings).toMatchObject({
      primaryLoginIdentifier: 'email',
      secondaryIdentifierPresence: 'none',
      dualIdentifierRegistration: 'atLeastOne',
      defaultMobileRegion: null,
      paging: { defaultPageSize: 20, maxPageSize: 100 },
    });
  });

  it('merges overrides into the defaults and replaces plain values', () => {
    const settings = loadSettings(undefined, { paging: { maxPageSize: 5 }, primaryLoginIdentifier: 'mobile' });
    expect(settings.paging).toEqual({ defaultPageSize: 20, maxPageSize: 5 });
    expect(settings.primaryLoginIdentifier).toBe('mobile');
    expect(settings.rateLimits.registration).toEqual({ points: 10, durationSeconds: 3600 });
  });

  it('allows many more registrations in development than the shipped default', () => {
    expect(loadSettings(undefined, {}, 'production').rateLimits.registration).toEqual({ points: 10, durationSeconds: 3600 });
    expect(loadSettings(undefined, {}, 'development').rateLimits.registration.points).toBeGreaterThanOrEqual(1000);
    expect(loadSettings(undefined, {}, 'development').rateLimits.loginPerIp).toEqual(loadSettings(undefined, {}).rateLimits.loginPerIp);
  });

  it('merges at every depth: one field of one verification flow keeps the rest of the defaults', () => {
    const settings = loadSettings(undefined, { verification: { flows: { 'email-verification': { enabled: true } } } });
    expect(settings.verification.flows['email-verification']).toEqual({
      enabled: true,
      resendTimeWindow: 60,
      expireTimeWindow: 86400,
      verificationType: 'byCode',
      verificationTemplate: 'emailVerification',
    });
    expect(settings.verification.flows['mobile-verification'].enabled).toBe(false);
    expect(settings.verification.verificationMode).toBe('liveMode');
  });

  it('merges a settings file at every depth too; arrays replace', () => {
    const file = writeSettings(
      'deep.json',
      JSON.stringify({ verification: { flows: { 'password-reset-by-email': { expireTimeWindow: 120 } } }, notifications: { channels: [{ channelName: 'email', providers: [], fallbackProviders: [] }] } }),
    );
    const settings = loadSettings(file);
    expect(settings.verification.flows['password-reset-by-email']).toMatchObject({ expireTimeWindow: 120, resendTimeWindow: 60, verificationTemplate: 'passwordResetByEmail' });
    expect(settings.notifications.channels.map((c) => c.channelName)).toEqual(['email']);
    expect(settings.notifications.defaultLanguage).toBe('en');
  });

  it('refuses an unknown flow or flow field, naming its path', () => {
    expect(configError(() => loadSettings(undefined, { verification: { flows: { 'email-verifcation': {} } as never } })).message).toContain('settings.verification.flows.email-verifcation');
    expect(configError(() => loadSettings(undefined, { verification: { flows: { 'email-verification': { verificationType: 'bySms' } as never } } })).message).toContain(
      'settings.verification.flows.email-verification.verificationType',
    );
  });

  it('refuses an unknown key inside a settings object, naming its path', () => {
    expect(() => loadSettings(undefined, { paging: { maxPagesize: 5 } as never })).toThrow(/settings\.paging\.maxPagesize: property maxPagesize should not exist/);
  });

  it('refuses an unknown key, naming it', () => {
    const message = configError(() => loadSettings(undefined, { primaryIdentifier: 'email' } as SettingsOverrides)).message;
    expect(message).toContain('unknown key "primaryIdentifier"');
  });

  it.each<[string, SettingsOverrides, string]>([
    ['a bad enum value', { primaryLoginIdentifier: 'phone' } as unknown as SettingsOverrides, 'settings.primaryLoginIdentifier'],
    ['a nested value out of range', { paging: { maxPageSize: 0 } }, 'settings.paging.maxPageSize'],
    ['a wrong type', { userRegisterIsPublic: 'yes' } as unknown as SettingsOverrides, 'settings.userRegisterIsPublic'],
    ['a lower-case region', { defaultMobileRegion: 'tr' }, 'settings.defaultMobileRegion'],
    ['an invalid array item', { customUserProperties: [{ name: '1x', type: 'string', required: false, maxLength: 10 }] }, 'settings.customUserProperties.0.name'],
  ])('refuses %s, naming its path', (_case, overrides, path) => {
    expect(configError(() => loadSettings(undefined, overrides)).message).toContain(path);
  });

  it('reads a settings file and applies it over the defaults, overrides last', () => {
    const file = writeSettings('ok.json', JSON.stringify({ primaryLoginIdentifier: 'emailOrMobile', dualIdentifierRegistration: 'both', paging: { defaultPageSize: 10 } }));
    const settings = loadSettings(file, { dualIdentifierRegistration: 'atLeastOne' });
    expect(settings).toMatchObject({
      primaryLoginIdentifier: 'emailOrMobile',
      dualIdentifierRegistration: 'atLeastOne',
      paging: { defaultPageSize: 10, maxPageSize: 100 },
    });
  });

  it('refuses an unknown key in the settings file', () => {
    const file = writeSettings('unknown.json', JSON.stringify({ pagingg: {} }));
    expect(configError(() => loadSettings(file)).message).toContain('unknown key "pagingg"');
  });

  it.each([
    ['a missing file', () => join(dir, 'missing.json')],
    ['a file that is not JSON', () => writeSettings('bad.json', '{ primaryLoginIdentifier: email')],
  ])('refuses %s, naming its path', (_case, path) => {
    const file = path();
    expect(configError(() => loadSettings(file)).message).toContain(file);
  });
});

describe('AppConfig.load', () => {
  it('loads env and settings from the given sources', () => {
    const config = AppConfig.load({ env: {}, settings: { paging: { maxPageSize: 7 } } });
    expect(config.env.PORT).toBe(3000);
    expect(config.embeddedDatabase).toBe(true);
    expect(config.settings.paging).toEqual({ defaultPageSize: 20, maxPageSize: 7 });
  });

  it('reads the settings file named by SERVICE_SETTINGS', () => {
    const file = writeSettings('app.json', JSON.stringify({ primaryLoginIdentifier: 'mobile', defaultMobileRegion: 'TR' }));
    const config = AppConfig.load({ env: { SERVICE_SETTINGS: file, DATABASE_URL: 'postgres://db/x' } });
    expect(config.settings).toMatchObject({ primaryLoginIdentifier: 'mobile', defaultMobileRegion: 'TR' });
    expect(config.embeddedDatabase).toBe(false);
  });

  it('stops on a SERVICE_SETTINGS file that does not exist, naming it', () => {
    const file = join(dir, 'nope.json');
    expect(configError(() => AppConfig.load({ env: { SERVICE_SETTINGS: file } })).message).toContain(file);
  });

  it('stops on a bad environment value before reading settings', () => {
    expect(configError(() => AppConfig.load({ env: { PORT: 'abc', SERVICE_SETTINGS: join(dir, 'nope.json') } })).message).toContain('PORT=');
  });

  it.each([
    [undefined, '/avatars/a.svg'],
    ['https://id.example.com', 'https://id.example.com/avatars/a.svg'],
    ['https://id.example.com/', 'https://id.example.com/avatars/a.svg'],
  ])('with PUBLIC_URL %s, publicUrl gives %s', (publicUrl, expected) => {
    expect(AppConfig.load({ env: { PUBLIC_URL: publicUrl } }).publicUrl('/avatars/a.svg')).toBe(expected);
  });
});

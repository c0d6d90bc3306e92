import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import type { PasswordPolicySettings } from './password-policy.settings.js';
import { parseRange, type BreachedPasswords } from './breached-passwords.js';
import { PasswordPolicyService, tooWeakSentence } from './password-policy.service.js';
import { guessableWords } from './strength.js';

const SHIPPED: PasswordPolicySettings = {
  minLength: 8,
  minScore: 2,
  rejectBreached: false,
  breachedCheck: { rangeUrl: 'https://api.pwnedpasswords.com/range/', timeoutMs: 2000, onUnavailable: 'allow' },
  userInputs: true,
};

// The policy over a stand-in for the range service that answers `count` (undefined: unavailable).
function policy(settings: Partial<PasswordPolicySettings> = {}, count?: number) {
  const asked: string[] = [];
  const breaches = { count: async (password: string) => (asked.push(password), count) } as unknown as BreachedPasswords;
  const config = { section: () => ({ passwordPolicy: { ...SHIPPED, ...settings, breachedCheck: { ...SHIPPED.breachedCheck, ...settings.breachedCheck } } }) } as unknown as AppConfig;
  return { service: new PasswordPolicyService(config, breaches), asked };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('parseRange', () => {
  it('reads SUFFIX:COUNT lines (CRLF), leaves padding lines of count 0 out', () => {
    const range = parseRange('0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n00D4F6E8FA6EECAD2A3AA415EEC418D38EC:0\r\n011053fd0102e94d6ae2f8b83d76faf94f6:13\r\nnot a line\r\n');
    expect([...range]).toEqual([
      ['0018A45C4D1DEF81644B54AB7F969B88D65', 1],
      ['011053FD0102E94D6AE2F8B83D76FAF94F6', 13],
    ]);
  });
});

describe('guessableWords', () => {
  it("takes each value whole and its words of 3 characters or more, lower-cased", () => {
    expect(guessableWords(['Ada.Lovelace@Example.com', null, 'Ada Lovelace', undefined, 'Blue Harbor Books'])).toEqual([
      'ada.lovelace@example.com', 'ada', 'lovelace', 'example', 'com', 'ada lovelace', 'blue harbor books', 'blue', 'harbor', 'books',
    ]);
  });
});

describe('PasswordPolicyService', () => {
  it('refuses by length first: 400 WeakPassword, with minLength', async () => {
    expect(await refusal(policy().service.check('Zq7!vR2', {}))).toMatchObject({ errCode: 'WeakPassword', status: 400 });
    expect(await refusal(policy({ minLength: 12 }).service.check('Zq7!vR2x9', {}))).toMatchObject({ errCode: 'WeakPassword', detail: expect.stringMatching(/12 characters/) });
    expect(await refusal(policy().service.check('ç'.repeat(37), {}))).toMatchObject({ errCode: 'WeakPassword', detail: expect.stringMatching(/72 bytes/) });
  });

  it('refuses a guessable password with the score and the feedback; the user\'s words count', async () => {
    const weak = await refusal(policy().service.check('password1', {}));
    expect(weak).toMatchObject({ errCode: 'PasswordTooWeak', status: 400, fields: { score: 0, minScore: 2, feedback: { warning: expect.any(String), suggestions: expect.any(Array) } } });
    // the sentence: what is wrong, then the estimator's advice; without advice, some of its own
    const feedback = weak.fields.feedback as { warning: string; suggestions: string[] };
    expect(weak.detail).toBe(`the password is too easy to guess. ${feedback.warning} ${feedback.suggestions.join(' ')}`);
    expect(tooWeakSentence({ warning: null, suggestions: [] })).toBe('the password is too easy to guess. Use a longer password: a few words that do not belong together.');
    await policy().service.check('quillfeather42', { fullname: 'Ada Lovelace' });
    expect(await refusal(policy().service.check('quillfeather42', { fullname: 'Theodora Quillfeather' }))).toMatchObject({ errCode: 'PasswordTooWeak' });
    await policy({ userInputs: false }).service.check('quillfeather42', { fullname: 'Theodora Quillfeather' });
    await policy({ minScore: 0 }).service.check('password1', {});
  });

  it('asks the range service only with rejectBreached, and answers by its count', async () => {
    const off = policy({}, 5);
    await off.service.check('a brand new passphrase', {});
    expect(off.asked).toEqual([]);
    const breached = await refusal(policy({ rejectBreached: true }, 5).service.check('a brand new passphrase', {}));
    expect(breached).toMatchObject({ errCode: 'PasswordBreached', status: 400, fields: { count: 5 } });
    await policy({ rejectBreached: true }, 0).service.check('a brand new passphrase', {});
  });

  it('an unavailable range service: allow accepts, refuse answers 503 PasswordCheckUnavailable', async () => {
    await policy({ rejectBreached: true }, undefined).service.check('a brand new passphrase', {});
    const refused = await refusal(policy({ rejectBreached: true, breachedCheck: { onUnavailable: 'refuse' } as PasswordPolicySettings['breachedCheck'] }, undefined).service.check('a brand new passphrase', {}));
    expect(refused).toMatchObject({ errCode: 'PasswordCheckUnavailable', status: 503, headers: { 'Retry-After': '5' } });
  });

  it('recommends a change at login for a password under minLength or minScore, never asking the range service', async () => {
    const { service, asked } = policy({ minLength: 10, rejectBreached: true }, 9);
    expect(await service.recommendsChange('Zq7!vR2x', {})).toBe(true);
    expect(await service.recommendsChange('password123', {})).toBe(true);
    expect(await service.recommendsChange('a brand new passphrase', {})).toBe(false);
    expect(asked).toEqual([]);
  });
});

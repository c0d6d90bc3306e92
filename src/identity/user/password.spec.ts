import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import { checkPasswordPolicy } from './password.js';

describe('checkPasswordPolicy', () => {
  it.each([
    ['8 characters', 'abcdefgh'],
    ['72 ASCII bytes', 'a'.repeat(72)],
    ['8 multi-byte characters', 'çççççççç'],
    ['36 two-byte characters (72 bytes)', 'ç'.repeat(36)],
  ])('accepts %s', (_case, password) => {
    expect(() => checkPasswordPolicy(password)).not.toThrow();
  });

  it.each([
    ['empty', '', /at least 8 characters/],
    ['7 characters', 'abcdefg', /at least 8 characters/],
    // 7 emoji are 14 UTF-16 units but 7 characters
    ['7 emoji', '🙂'.repeat(7), /at least 8 characters/],
    ['73 ASCII bytes', 'a'.repeat(73), /at most 72 bytes/],
    // fewer than 72 characters but more than 72 bytes: refused, never truncated
    ['37 two-byte characters (74 bytes)', 'ç'.repeat(37), /at most 72 bytes/],
    ['20 emoji (80 bytes)', '🙂'.repeat(20), /at most 72 bytes/],
    ['71 ASCII + one two-byte character (73 bytes)', 'a'.repeat(71) + 'é', /at most 72 bytes/],
  ])('refuses %s with 400 WeakPassword', (_case, password, message) => {
    let error: unknown;
    try {
      checkPasswordPolicy(password);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ errCode: 'WeakPassword', status: 400 });
    expect((error as AppError).message).toMatch(message);
  });
});

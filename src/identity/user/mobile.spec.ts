import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../kernel/errors.js';
import { looksLikeMobile, normalizeMobile } from './mobile.js';

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('expected an AppError');
}

describe('normalizeMobile', () => {
  it.each<[string, string | null, string]>([
    ['+1 415 555 2671', null, '+14155552671'],
    ['+14155552671', null, '+14155552671'],
    ['  +1 415 555 2671  ', null, '+14155552671'],
    ['+1 (415) 555-2671', null, '+14155552671'],
    ['+44 20 7946 0958', null, '+442079460958'],
    ['+90 (532) 123 45 67', null, '+905321234567'],
    ['(+90) 532-123-45-67', null, '+905321234567'],
    ['+90.532.123.45.67', null, '+905321234567'],
    ['+90\u00a0532\u00a0123\u00a045\u00a067', null, '+905321234567'],
    // an international number ignores the default region
    ['+44 20 7946 0958', 'TR', '+442079460958'],
    // national numbers are read in the default region
    ['0532 123 45 67', 'TR', '+905321234567'],
    ['020 7946 0958', 'GB', '+442079460958'],
    ['(415) 555-2671', 'US', '+14155552671'],
  ])('%j (region %s) → %s', (input, region, expected) => {
    expect(normalizeMobile(input, region)).toBe(expected);
  });

  it.each<[string, string, string | null]>([
    ['letters', '+1 415 CALL NOW', null],
    ['letters only', 'mobile', 'TR'],
    ['empty', '', 'TR'],
    ['too short', '+1 415', null],
    ['too short for its region', '0532 123', 'TR'],
    ['not a valid number', '+15550000000', null],
    ['national number without a region', '0532 123 45 67', null],
    ['an email address', 'user@example.com', null],
    ['a number with an @', '+1415555@2671', null],
  ])('refuses %s (%j) with 400 InvalidMobile naming the field', (_case, input, region) => {
    const error = thrown(() => normalizeMobile(input, region));
    expect(error).toBeInstanceOf(AppError);
    expect(error.errCode).toBe('InvalidMobile');
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^mobile /);
  });

  it('names the field it was given', () => {
    expect(thrown(() => normalizeMobile('nope', null, 'SUPER_ADMIN_IDENTIFIER')).message).toMatch(/^SUPER_ADMIN_IDENTIFIER /);
  });
});

describe('looksLikeMobile', () => {
  it.each([
    ['+14155552671', true],
    ['+1 (415) 555-2671', true],
    ['0532 123 45 67', true],
    ['(+90) 532-123-45-67', true],
    ['user@example.com', false],
    ['12@34', false],
    ['admin', false],
    ['+1 415 CALL', false],
    ['', false],
  ])('%j → %s', (value, expected) => {
    expect(looksLikeMobile(value)).toBe(expected);
  });
});

import { describe, expect, it } from '@jest/globals';
import { CODENAME_MAX_LENGTH, codenameBase, uniqueCodename } from './codename.js';

const URL_SAFE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

describe('codenameBase', () => {
  it.each([
    ['Acme', 'acme'],
    ['MY SHOP', 'my-shop'],
    ['Café Zürich', 'cafe-zurich'],
    ['Crème Brûlée & Co.', 'creme-brulee-co'],
    ['İstanbul Çiçek', 'istanbul-cicek'],
    ['a  --  b', 'a-b'],
    ['Salt & Pepper / Grill!!', 'salt-pepper-grill'],
    ['  --Shop--  ', 'shop'],
    ['Shop 24/7', 'shop-24-7'],
    ['Ｆｕｌｌｗｉｄｔｈ', 'fullwidth'],
  ])('%j → %j', (name, expected) => {
    expect(codenameBase(name)).toBe(expected);
  });

  it.each([[''], ['   '], ['!!!'], ['東京'], ['Москва'], ['🙂']])('%j (nothing latin left) → "store"', (name) => {
    expect(codenameBase(name)).toBe('store');
  });

  it.each([
    ['root', 'root-store'],
    ['Admin', 'admin-store'],
    ['API', 'api-store'],
    ['Auth API', 'auth-api-store'],
    ['www', 'www-store'],
  ])('reserved %j → %j', (name, expected) => {
    expect(codenameBase(name)).toBe(expected);
  });

  it.each([
    ['Straße 5', 'strasse-5'],
    ['Ørsted Ærø', 'orsted-aero'],
    ['Łódź', 'lodz'],
    ["Tom’s Shop", 'toms-shop'],
    ["Bob's", 'bobs'],
  ])('%j → %j (letters normalization does not split, apostrophes)', (name, codename) => {
    expect(codenameBase(name)).toBe(codename);
  });

  it('does not treat a name that merely contains a reserved word as reserved', () => {
    expect(codenameBase('Admin Tools')).toBe('admin-tools');
  });

  it('caps the length so a "-NNN" suffix still fits', () => {
    const base = codenameBase('x'.repeat(100));
    expect(base.length).toBeLessThanOrEqual(CODENAME_MAX_LENGTH - 4);
    expect(`${base}-999`.length).toBeLessThanOrEqual(40);
  });

  it('does not end with a dash when the cut falls on a separator', () => {
    const name = `${'a'.repeat(35)} bbbbbbbb`; // the 36th character is the space
    expect(codenameBase(name)).toBe('a'.repeat(35));
  });

  it.each([
    'Café Zürich',
    '-leading and trailing-',
    `${'word '.repeat(20)}`,
    'root',
    '東京 Tokyo 2',
    '   ',
    'a'.repeat(35) + '-' + 'b'.repeat(10),
  ])('%j gives a url-safe codename', (name) => {
    const base = codenameBase(name);
    expect(base).toMatch(URL_SAFE);
    expect(base.length).toBeLessThanOrEqual(CODENAME_MAX_LENGTH);
  });
});

describe('uniqueCodename', () => {
  it.each<[string[], string]>([
    [[], 'acme'],
    [['other', 'acme-2'], 'acme'],
    [['acme'], 'acme-2'],
    [['acme', 'acme-2'], 'acme-3'],
    [['acme', 'acme-3'], 'acme-2'],
    [['acme', 'acme-2', 'acme-3', 'acme-4'], 'acme-5'],
  ])('taken %j → %j', (taken, expected) => {
    expect(uniqueCodename('acme', taken)).toBe(expected);
  });

  it('accepts any iterable of taken codenames', () => {
    expect(uniqueCodename('acme', new Set(['acme']))).toBe('acme-2');
  });
});

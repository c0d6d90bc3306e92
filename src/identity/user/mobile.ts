import { createRequire } from 'node:module';
import type { CountryCode, MetadataJson } from 'libphonenumber-js/core';
import { AppError } from '../../kernel/errors.js';

// class-validator (CommonJS) loads libphonenumber-js's CommonJS build with the full metadata at
// boot; importing the package's ES build as well would hold a second copy of both (~2.5 MB).
// Required, they are the same modules.
const require = createRequire(import.meta.url);
const { parsePhoneNumberFromString } = require('libphonenumber-js/core') as typeof import('libphonenumber-js/core');
const metadata = require('libphonenumber-js/metadata.max.json') as MetadataJson;

// Digits with the usual separators, optionally a leading `+` (or `(+`, as in `(+90) 532...`);
// anything else is not a number.
const PHONE_SHAPE = /^\(?\+?[0-9 ().\-\u00a0]{4,32}$/;

// E.164 (`+`, country code, subscriber number) or 400 InvalidMobile naming `field`.
// Numbers without `+` are read in `defaultRegion` when one is configured.
export function normalizeMobile(input: string, defaultRegion: string | null, field = 'mobile'): string {
  const trimmed = input.trim();
  const parsed = PHONE_SHAPE.test(trimmed)
    ? parsePhoneNumberFromString(trimmed, { defaultCountry: (defaultRegion ?? undefined) as CountryCode | undefined }, metadata)
    : undefined;
  if (!parsed?.isValid()) {
    const format = defaultRegion ? `international format or a ${defaultRegion} number` : 'international format (+ and country code)';
    throw new AppError('InvalidMobile', `${field} must be a valid phone number in ${format}`);
  }
  return parsed.number;
}

export function looksLikeMobile(value: string): boolean {
  return PHONE_SHAPE.test(value.trim()) && !value.includes('@');
}

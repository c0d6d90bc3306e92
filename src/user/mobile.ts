import { parsePhoneNumberFromString, type CountryCode, type MetadataJson } from 'libphonenumber-js/core';
import metadata from 'libphonenumber-js/metadata.max.json';
import { AppError } from '../common/errors.js';

// Digits with the usual separators, optionally a leading `+` (or `(+`, as in `(+90) 532...`);
// anything else is not a number.
const PHONE_SHAPE = /^\(?\+?[0-9 ().\-\u00a0]{4,32}$/;

// E.164 (`+`, country code, subscriber number) or 400 InvalidMobile naming `field`.
// Numbers without `+` are read in `defaultRegion` when one is configured.
export function normalizeMobile(input: string, defaultRegion: string | null, field = 'mobile'): string {
  const trimmed = input.trim();
  const parsed = PHONE_SHAPE.test(trimmed)
    ? parsePhoneNumberFromString(trimmed, { defaultCountry: (defaultRegion ?? undefined) as CountryCode | undefined }, metadata as MetadataJson)
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

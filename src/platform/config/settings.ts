import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import { ConfigError } from './env.js';
import { projectPath } from './project-path.js';

// The settings file's mechanism: read, merged over the shipped defaults, validated section by
// section, every problem in one ConfigError. What the sections are is not known here: each
// feature declares the classes it reads and the root composes the list (src/settings.ts).

// A class whose decorated properties (class-validator, class-transformer) are the settings.
export type SettingsSchema<T extends object = object> = new () => T;

// One section of the settings file. Without `key`, the class's properties are top-level keys of
// the file (the service's own sections: `tenancy`, `paging`, `socialLogin`...); with `key`, the
// section is the object under that one top-level key (an extension's, validated as its own).
export interface SettingsSection<T extends object = object> {
  key?: string;
  schema: SettingsSchema<T>;
}

// The validated sections, by their class.
export type SectionValues = ReadonlyMap<SettingsSchema, object>;

// Any part of the settings, at any depth: it merges into the defaults as a settings file does.
// A Map (the social providers by name) is written as an object of its entries.
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends Map<infer K, infer V>
    ? Map<K, V> | { [key in K & string]?: DeepPartial<V> }
    : T extends object
      ? { [K in keyof T]?: DeepPartial<T[K]> }
      : T;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

// The flat settings the top-level sections of a list declare: one object, every key typed.
export type SettingsOf<S extends readonly SettingsSection[]> = UnionToIntersection<
  { [I in keyof S]: S[I] extends { key: string } ? never : S[I] extends SettingsSection<infer T> ? T : never }[number]
>;

// The top-level sections of a list as one object, from their validated values.
export function flatSettings<S extends readonly SettingsSection[]>(values: SectionValues, sections: S): SettingsOf<S> {
  const flat = sections.filter((s) => s.key === undefined).map((s) => values.get(s.schema));
  // Each value is its class's instance, and the classes' keys do not overlap (loadSections).
  return Object.assign({}, ...flat) as SettingsOf<S>;
}

// Settings given in code over the file (tests, embedding), checked as the file is.
export type SettingsInput = Readonly<Record<string, unknown>>;

// The top-level keys a section declares: its key, or its class's validated properties.
export function sectionKeys(section: SettingsSection): string[] {
  if (section.key !== undefined) return [section.key];
  const metadata = getMetadataStorage().getTargetValidationMetadatas(section.schema, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}

export const DEFAULT_SETTINGS_FILE = projectPath('config', 'settings.default.json');
// Applied over the defaults when NODE_ENV is development: limits a developer does not hit.
export const DEVELOPMENT_SETTINGS_FILE = projectPath('config', 'settings.development.json');

function readJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError([`settings file ${path}: ${(e as Error).message}`]);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the top level must be an object');
    return parsed as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError([`settings file ${path}: not valid (${(e as Error).message})`]);
  }
}

// Objects merge at every depth (so `paging: { maxPageSize }` keeps `defaultPageSize`, and one
// field of one verification flow keeps the flow's other defaults); arrays and scalars replace.
function merge(base: Readonly<Record<string, unknown>>, over: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, entry] of Object.entries(over)) {
    // Validated settings given again (a replica's): their Maps merge as the objects they were.
    const value: unknown = entry instanceof Map ? Object.fromEntries(entry) : entry;
    const prev = out[key];
    const bothObjects = [prev, value].every((v) => v && typeof v === 'object' && !Array.isArray(v));
    out[key] = bothObjects ? merge(prev as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

function flatten(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix + e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m}`);
    return own.concat(flatten(e.children ?? [], path + '.'));
  });
}

// Reads the settings file over the shipped defaults and validates every section. Keys no section
// declares are refused, at the top level and, by each class, at any depth.
export function loadSections(
  file: string | undefined,
  overrides: SettingsInput = {},
  nodeEnv: string | undefined,
  sections: readonly SettingsSection[],
): SectionValues {
  const shipped = readJson(DEFAULT_SETTINGS_FILE);
  const defaults = nodeEnv === 'development' ? merge(shipped, readJson(DEVELOPMENT_SETTINGS_FILE)) : shipped;
  const fromFile = file ? readJson(file) : {};
  // Who declares each top-level key: the first section; a later one claiming it is refused.
  const owners = new Map<string, SettingsSection>();
  const clashes: string[] = [];
  for (const section of sections) {
    for (const key of sectionKeys(section)) {
      if (!owners.has(key)) owners.set(key, section);
      else if (section.key !== undefined) clashes.push(`settings: section "${key}" of an extension is one of the service's own keys`);
      else clashes.push(`settings: key "${key}" is declared by ${owners.get(key)!.schema.name} and ${section.schema.name}`);
    }
  }
  if (clashes.length) throw new ConfigError(clashes);
  const unknown = Object.keys({ ...fromFile, ...overrides }).filter((k) => !owners.has(k));
  if (unknown.length) throw new ConfigError(unknown.map((k) => `settings: unknown key "${k}"`));

  const all = merge(merge(defaults, fromFile), overrides);
  const problems: string[] = [];
  const values = new Map<SettingsSchema, object>();
  for (const section of sections) {
    let raw: unknown;
    let prefix = '';
    if (section.key === undefined) {
      raw = Object.fromEntries(sectionKeys(section).filter((k) => k in all).map((k) => [k, all[k]]));
    } else {
      raw = all[section.key] ?? {};
      prefix = `${section.key}.`;
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
        problems.push(`${section.key}: must be an object`);
        continue;
      }
    }
    const value = plainToInstance(section.schema, raw, { exposeDefaultValues: true });
    // Unknown keys inside objects are refused too: a misspelt key would otherwise do nothing.
    problems.push(...flatten(validateSync(value, { forbidUnknownValues: false, whitelist: true, forbidNonWhitelisted: true }), prefix));
    values.set(section.schema, value);
  }
  if (problems.length) throw new ConfigError(problems.map((p) => `settings.${p}`));
  return values;
}

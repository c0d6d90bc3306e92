import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectPath } from './platform/config/project-path.js';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { AddedParts } from './app.module.js';
import { isExtension, type Extension } from './extension.js';
import { AUDIT_ACTIONS } from './kernel/audit.js';
import { registerErrors } from './kernel/errors.js';
import { ExtensionCatalogue } from './kernel/extensions.js';
import { AppConfig } from './platform/config/app-config.js';
import { ConfigError } from './platform/config/env.js';
import { DataObjectAccessSetting, EventSubscriptionSetting } from './kernel/data-objects.settings.js';
import { TemplateSetting } from './delivery/notification/notification.settings.js';
import type { SettingsSection } from './platform/config/settings.js';

// How the service takes in extensions (docs/extending.md): loads them from SERVICE_EXTENSIONS,
// checks their definitions, and turns them into what the configuration and the module tree take.

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const AUDIT_ACTION = /^[a-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)+$/;
const MIGRATION_NAME = /\d{13}$/;

// Every problem of every extension, in one ConfigError, before anything starts.
export interface ComposedExtensions {
  sections: SettingsSection[];
  added: AddedParts;
  // The audit actions they add, with what each means (for the generated reference).
  auditActions: Record<string, string>;
}

export function composeExtensions(extensions: readonly Extension[]): ComposedExtensions {
  const problems: string[] = [];
  const names = new Set<string>();
  const sections: SettingsSection[] = [];
  const imports: unknown[] = [];
  const entities: Function[] = [];
  const migrations: Function[] = [];
  const auditActions: Record<string, string> = {};
  const catalogue = { permissionGroups: [] as ExtensionCatalogue['permissionGroups'][number][], dataObjects: [] as DataObjectAccessSetting[], eventSubscriptions: [] as EventSubscriptionSetting[], templates: [] as TemplateSetting[] };
  for (const ext of extensions) {
    const at = `extension "${ext.name}"`;
    if (typeof ext.name !== 'string' || !NAME.test(ext.name)) {
      problems.push(`extension "${String(ext.name)}": name must be lower-case letters, digits and dashes`);
      continue;
    }
    if (names.has(ext.name)) problems.push(`${at} is loaded twice`);
    names.add(ext.name);
    imports.push(...(ext.modules ?? []));
    entities.push(...(ext.entities ?? []));
    for (const m of ext.migrations ?? []) {
      if (typeof m !== 'function' || !MIGRATION_NAME.test(m.name)) problems.push(`${at}: migration ${String((m as Function)?.name)} must be a class whose name ends with a 13-digit timestamp`);
      else migrations.push(m);
    }
    if (ext.settings) {
      if (typeof ext.settings.schema !== 'function' || !/^[a-z][A-Za-z0-9]*$/.test(ext.settings.key ?? '')) problems.push(`${at}: settings needs a key (letters and digits, lower-case first) and a schema class`);
      else if (sections.some((s) => s.key === ext.settings!.key)) problems.push(`${at}: settings section "${ext.settings.key}" is another extension's`);
      else sections.push(ext.settings);
    }
    if (ext.errors) {
      try {
        registerErrors(ext.errors);
      } catch (error) {
        problems.push(`${at}: ${(error as Error).message}`);
      }
    }
    for (const group of ext.permissions ?? []) catalogue.permissionGroups.push(group);
    for (const [action, meaning] of Object.entries(ext.auditActions ?? {})) {
      if (!AUDIT_ACTION.test(action)) problems.push(`${at}: audit action "${action}" must be dotted words (ticket.opened)`);
      else if (action in AUDIT_ACTIONS || action in auditActions) problems.push(`${at}: audit action "${action}" is declared twice`);
      else auditActions[action] = meaning;
    }
    catalogue.dataObjects.push(...checked(DataObjectAccessSetting, ext.dataObjects ?? [], `${at}: dataObjects`, problems));
    catalogue.eventSubscriptions.push(...checked(EventSubscriptionSetting, ext.eventSubscriptions ?? [], `${at}: eventSubscriptions`, problems));
    catalogue.templates.push(...checked(TemplateSetting, ext.templates ?? [], `${at}: templates`, problems));
  }
  if (problems.length) throw new ConfigError(problems);
  // Each settings class is its own injection token: a service asks for it by type.
  const settingsModule = sections.length ? [ExtensionSettingsModule.forSections(sections)] : [];
  return {
    sections,
    auditActions,
    added: {
      imports: [...settingsModule, ...imports],
      entities,
      migrations,
      catalogue: new ExtensionCatalogue(catalogue.permissionGroups, catalogue.dataObjects, catalogue.eventSubscriptions, catalogue.templates, Object.keys(auditActions)),
    },
  };
}

@Global()
@Module({})
class ExtensionSettingsModule {
  static forSections(sections: readonly SettingsSection[]): DynamicModule {
    const providers = sections.map((s) => ({ provide: s.schema, inject: [AppConfig], useFactory: (config: AppConfig) => config.section(s.schema) }));
    return { module: ExtensionSettingsModule, providers, exports: sections.map((s) => s.schema) };
  }
}

function checked<T extends object>(schema: new () => T, list: readonly object[], at: string, problems: string[]): T[] {
  return list.map((plain, i) => {
    const value = plainToInstance(schema, plain, { exposeDefaultValues: true });
    const found = flatten(validateSync(value, { forbidUnknownValues: false, whitelist: true, forbidNonWhitelisted: true }));
    for (const p of found) problems.push(`${at}[${i}].${p}`);
    return value;
  });
}

function flatten(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => Object.values(e.constraints ?? {}).map((m) => `${prefix}${e.property}: ${m}`).concat(flatten(e.children ?? [], `${prefix}${e.property}.`)));
}

// SERVICE_EXTENSIONS: package names or paths from the working directory, comma-separated. Each
// module exports an extension (defineExtension) as its default export or as `extension`.
export async function loadExtensions(list: string | undefined, cwd = process.cwd()): Promise<Extension[]> {
  const entries = (list ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  const loaded: Extension[] = [];
  for (const entry of entries) {
    const where = `SERVICE_EXTENSIONS: "${entry}"`;
    let file: string;
    try {
      file = entryFile(entry, cwd);
    } catch (error) {
      throw new ConfigError([`${where} cannot be found: ${(error as Error).message}`]);
    }
    let exported: Record<string, unknown>;
    try {
      exported = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError([`${where} cannot be loaded (${file}): ${(error as Error).message.split('\n')[0]}`]);
    }
    const extension = [exported.default, exported.extension].find(isExtension);
    if (!extension) throw new ConfigError([`${where} (${file}) exports no extension: export the result of defineExtension(...) as default or as "extension"`]);
    loaded.push(extension);
  }
  return loaded;
}

// A path (from cwd) or a package name (from cwd's node_modules, walking up) to the file to import.
function entryFile(entry: string, cwd: string): string {
  const isPath = entry.startsWith('.') || isAbsolute(entry);
  if (isPath) {
    const path = resolve(cwd, entry);
    if (!existsSync(path)) throw new Error(`${path} does not exist`);
    return builtTwin(path) ?? (statSync(path).isDirectory() ? packageEntry(path) : path);
  }
  for (let dir = cwd; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', entry);
    if (existsSync(join(candidate, 'package.json'))) return packageEntry(candidate);
    if (dirname(dir) === dir) throw new Error(`no package "${entry}" in node_modules from ${cwd}`);
  }
}

const RUNNING_SOURCES = import.meta.url.endsWith('.ts');

// TypeScript sources inside this repository (examples/, or a team's folder beside src/) run from
// what `npm run build` made of them: a folder's index.ts, or a .ts file, as its twin under dist/.
function builtTwin(path: string): string | undefined {
  // Running from the sources themselves (a TypeScript loader): the sources, not the build.
  if (RUNNING_SOURCES) return statSync(path).isDirectory() && existsSync(join(path, 'index.ts')) ? join(path, 'index.ts') : undefined;
  const rel = relative(projectPath(), path);
  if (rel.startsWith('..') || isAbsolute(rel) || rel.split(sep)[0] === 'dist' || rel.split(sep)[0] === 'node_modules') return undefined;
  const source = statSync(path).isDirectory() ? join(path, 'index.ts') : path;
  if (!source.endsWith('.ts') || !existsSync(source)) return undefined;
  const twin = projectPath('dist', relative(projectPath(), source).replace(/\.ts$/, '.js'));
  if (!existsSync(twin)) throw new Error(`${source} is not built (no ${twin}): run npm run build`);
  return twin;
}

// A package folder's entry: exports "." (import or default), else main, else index.js.
function packageEntry(dir: string): string {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return join(dir, 'index.js');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: string };
  const root = typeof pkg.exports === 'object' && pkg.exports && '.' in pkg.exports ? (pkg.exports as Record<string, unknown>)['.'] : pkg.exports;
  const target = typeof root === 'string' ? root : root && typeof root === 'object' ? ((root as Record<string, unknown>).import ?? (root as Record<string, unknown>).default) : undefined;
  const file = typeof target === 'string' ? target : (pkg.main ?? 'index.js');
  return resolve(dir, file);
}

export async function loadAndCompose(list: string, cwd = process.cwd()): Promise<ComposedExtensions> {
  return composeExtensions(await loadExtensions(list, cwd));
}

import { Injectable, type OnModuleInit } from '@nestjs/common';
import Handlebars from 'handlebars';
import type { ChannelName, TemplateSetting } from './notification.settings.js';
import { ExtensionCatalogue } from '../../kernel/extensions.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { NotificationSection } from './notification.settings.js';

type Render = (context: object) => string;

interface Compiled {
  subject?: Render;
  body: Render;
  title?: Render;
  data?: Record<string, Render>;
}

export interface RenderedMessage {
  subject?: string;
  body: string;
  data?: Record<string, string>;
}

// Channels read as HTML are escaped (`{{x}}`; `{{{x}}}` opts out). SMS, WhatsApp and push are
// plain text, where entities would show as such.
const ESCAPED: ReadonlySet<ChannelName> = new Set(['email', 'inApp']);

// Templates compiled once at boot; a template that does not compile stops the boot, named.
@Injectable()
export class TemplateService implements OnModuleInit {
  private readonly templates = new Map<string, Compiled>();
  private readonly defaultLanguage: string;
  private readonly problems: string[] = [];

  constructor(
    config: AppConfig,
    private readonly checks: BootChecks,
    private readonly extensions: ExtensionCatalogue,
  ) {
    this.defaultLanguage = config.section(NotificationSection).notifications.defaultLanguage;
    const problems = this.problems;
    for (const t of config.section(NotificationSection).notifications.templates) {
      try {
        this.templates.set(key(t.templateName, t.channel, t.language), compileTemplate(t));
      } catch (error) {
        problems.push(`settings.notifications.templates: ${t.templateName} (${t.channel}, ${t.language}) does not compile: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  }

  // Reported at init with every module's settings problems (BootChecks).
  onModuleInit(): void {
    // The extensions' templates, where the settings give none of the same name, channel, language.
    try {
      this.addDefaults([...this.extensions.templates]);
    } catch (error) {
      this.problems.push(`an extension's notification template does not compile: ${(error as Error).message.split('\n')[0]}`);
    }
    this.checks.report(this.problems);
  }

  // Templates a feature ships (verification messages): each is used where the settings give no
  // template of the same name, channel and language.
  addDefaults(templates: TemplateSetting[]): void {
    for (const t of templates) {
      const k = key(t.templateName, t.channel, t.language);
      if (!this.templates.has(k)) this.templates.set(k, compileTemplate(t));
    }
  }

  has(name: string, channel: ChannelName): boolean {
    return [...this.templates.keys()].some((k) => k.startsWith(`${name}\n${channel}\n`));
  }

  // The first language of `preferences` (then the default) that has this template; a
  // regional tag falls back to its language (en-GB → en).
  resolveLanguage(name: string, channel: ChannelName, preferences: (string | null | undefined)[]): string | undefined {
    const candidates = [...preferences, this.defaultLanguage].filter((l): l is string => !!l).flatMap((l) => [l, l.split('-')[0]]);
    return candidates.find((l) => this.templates.has(key(name, channel, l)));
  }

  render(name: string, channel: ChannelName, language: string, context: object): RenderedMessage {
    const t = this.templates.get(key(name, channel, language));
    if (!t) throw new Error(`template ${name} (${channel}, ${language}) not found`);
    if (t.title) {
      // push: the title travels as the subject
      const data = t.data && Object.fromEntries(Object.entries(t.data).map(([k, render]) => [k, render(context)]));
      return { subject: t.title(context), body: t.body(context), data };
    }
    return { subject: t.subject?.(context), body: t.body(context) };
  }
}

function key(name: string, channel: string, language: string): string {
  return `${name}\n${channel}\n${language}`;
}

function compileTemplate(t: TemplateSetting): Compiled {
  const options = { noEscape: !ESCAPED.has(t.channel), strict: false };
  // Compile eagerly: Handlebars otherwise reports syntax errors at first use.
  const compile = (source: string, escape = !options.noEscape): Render => {
    const o = { ...options, noEscape: !escape };
    Handlebars.precompile(source, o);
    return Handlebars.compile(source, o);
  };
  if (typeof t.body === 'string') {
    if (t.channel === 'push') throw new Error('a push template body is { title, body, data }');
    // An email subject is a header, plain text: escaped, O'Brien would read O&#x27;Brien.
    const subject = t.subject === undefined ? undefined : compile(t.subject, t.channel !== 'email' && !options.noEscape);
    return { subject, body: compile(t.body) };
  }
  if (t.channel !== 'push' || typeof t.body !== 'object' || typeof t.body.title !== 'string' || typeof t.body.body !== 'string') {
    throw new Error('body must be text (or { title, body, data } for push)');
  }
  const data = t.body.data ? Object.fromEntries(Object.entries(t.body.data).map(([k, v]) => [k, compile(String(v))])) : undefined;
  return { title: compile(t.body.title), body: compile(t.body.body), data };
}

// Languages from an Accept-Language header, most preferred first.
export function acceptedLanguages(header: string | null | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((part) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag: tag.trim(), q: q ? Number(q.slice(2)) : 1 };
    })
    .filter((l) => /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(l.tag) && l.q > 0)
    .sort((a, b) => b.q - a.q)
    .map((l) => l.tag.toLowerCase().replace(/-(\w+)$/, (_, r: string) => `-${r.toUpperCase()}`));
}

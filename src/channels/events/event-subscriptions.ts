import { BUILT_IN_OBJECTS } from '../../delivery/broker/data-objects.js';
import { resolveTopicAlias } from '../../delivery/broker/topics.js';
import { ConfigError } from '../../platform/config/env.js';
import type { AccessLevel } from '../../kernel/data-objects.settings.js';
import type { BrokerSection } from '../../delivery/broker/broker.settings.js';
import { compileScript, type Script, type ScriptKind } from './event-scripts.js';

export interface CompiledTopic {
  // Client-facing name.
  name: string;
  dataObjectName: string;
  brokerTopic: string;
  accessLevel: AccessLevel;
  hasOwnerField: boolean;
  payloadMapping?: Script;
  excludeFields: readonly string[];
}

export interface CompiledSubscription {
  name: string;
  transport: 'websocket' | 'sse';
  topics: ReadonlyMap<string, CompiledTopic>;
  absoluteRoles: ReadonlySet<string>;
  // Undefined when empty or absent: nobody is turned away by role.
  checkRoles?: ReadonlySet<string>;
  authScript?: Script;
  filterScript?: Script;
}

// Every subscription of the settings, with aliases resolved and scripts compiled; anything
// wrong stops the boot with the subscription and topic named.
export function compileSubscriptions(settings: Pick<BrokerSection, 'eventSubscriptions' | 'dataObjectAccess'>, service: string): Map<string, CompiledSubscription> {
  const problems: string[] = [];
  const objects = new Map(BUILT_IN_OBJECTS.map((o) => [o.name.toLowerCase(), o]));
  for (const o of settings.dataObjectAccess) objects.set(o.name.toLowerCase(), o);
  const known = new Set(objects.keys());

  const result = new Map<string, CompiledSubscription>();
  for (const sub of settings.eventSubscriptions) {
    const where = `settings.eventSubscriptions "${sub.name}"`;
    const script = (kind: ScriptKind, source: string | undefined, at: string): Script | undefined => {
      if (source === undefined || source.trim() === '') return undefined;
      const compiled = compileScript(kind, source);
      if (typeof compiled === 'function') return compiled;
      problems.push(`${at}: ${kind} does not compile: ${compiled.error}`);
      return undefined;
    };
    const topics = new Map<string, CompiledTopic>();
    for (const topic of sub.topics) {
      const at = `${where} topic "${topic.name}"`;
      const object = objects.get(topic.dataObjectName.toLowerCase());
      if (!object) problems.push(`${at}: dataObjectName "${topic.dataObjectName}" is not a known data object (add it to dataObjectAccess)`);
      const resolved = resolveTopicAlias(topic.topic, service, known);
      if ('error' in resolved) {
        problems.push(`${at}: ${resolved.error}`);
        continue;
      }
      topics.set(topic.name, {
        name: topic.name,
        dataObjectName: topic.dataObjectName,
        brokerTopic: resolved.topic,
        accessLevel: topic.forceAccessLevel ?? object?.accessLevel ?? 'accessPrivate',
        hasOwnerField: object?.hasOwnerField ?? true,
        payloadMapping: script('payloadMapping', topic.payloadMapping, at),
        excludeFields: topic.excludeFields ?? [],
      });
    }
    result.set(sub.name, {
      name: sub.name,
      transport: sub.transport,
      topics,
      absoluteRoles: new Set(sub.auth.absoluteRoles),
      checkRoles: sub.auth.checkRoles?.length ? new Set(sub.auth.checkRoles) : undefined,
      authScript: script('authScript', sub.auth.authScript, where),
      filterScript: script('filterScript', sub.auth.filterScript, where),
    });
  }
  if (problems.length) throw new ConfigError(problems);
  return result;
}

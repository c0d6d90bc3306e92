// A TypeScript module of the event channel's types, rendered from its AsyncAPI document (for
// client generators; the service does not use it): each topic's payload (`TopicPayloads`), the
// packets (`EventPacket<T>`, `SubscribedPacket`, `ErrorPacket`...) and `SUBSCRIPTIONS`.
import type { AsyncApiDocument, AsyncApiMessage } from './asyncapi.js';
import type { JsonSchema } from './asyncapi-schemas.js';

const REF = '#/components/schemas/';
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const typeName = (name: string): string => {
  const cleaned = name.replace(/[^A-Za-z0-9_$]/g, '_');
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned;
};
const propertyKey = (name: string): string => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const literal = (value: unknown): string => JSON.stringify(value) ?? 'undefined';
const comment = (text: unknown, indent: string): string =>
  typeof text === 'string' && text.trim() ? `${text.trim().split('\n').filter(Boolean).map((line) => `${indent}// ${line}`).join('\n')}\n` : '';

// A JSON Schema as a TypeScript type: references by their component's name, unknown where the
// schema says nothing.
function render(schema: JsonSchema | undefined, indent = ''): string {
  if (!schema || typeof schema !== 'object') return 'unknown';
  if (typeof schema.$ref === 'string') return schema.$ref.startsWith(REF) ? typeName(schema.$ref.slice(REF.length)) : 'unknown';
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ') || 'never';
  const group = (list: unknown, join: string): string => `(${(list as JsonSchema[]).map((s) => render(s, indent)).join(join)})`;
  if (Array.isArray(schema.allOf)) {
    const { allOf, description: _d, ...own } = schema;
    const parts = (allOf as JsonSchema[]).map((s) => render(s, indent));
    if (own.properties) parts.push(render(own, indent));
    return parts.length === 1 ? parts[0] : `(${parts.join(' & ')})`;
  }
  if (Array.isArray(schema.oneOf)) return group(schema.oneOf, ' | ');
  if (Array.isArray(schema.anyOf)) return group(schema.anyOf, ' | ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : schema.properties ? ['object'] : [];
  if (!types.length) return 'unknown';
  return types.map((type) => renderType(type, schema, indent)).join(' | ');
}

function renderType(type: string, schema: JsonSchema, indent: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = render(schema.items as JsonSchema | undefined, indent);
      return /^[A-Za-z0-9_$"']+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object': {
      const properties = Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {});
      const extra = schema.additionalProperties;
      const rest = extra === false ? '' : extra && typeof extra === 'object' ? render(extra as JsonSchema, indent) : extra === true || !properties.length ? 'unknown' : '';
      if (!properties.length) return rest ? `Record<string, ${rest}>` : 'Record<string, never>';
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const inner = `${indent}  `;
      const lines = properties.map(([name, property]) => `${comment(property.description, inner)}${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${render(property, inner)};`);
      if (rest) lines.push(`${inner}[field: string]: ${rest === 'unknown' ? 'unknown' : `${rest} | undefined`};`);
      return `{\n${lines.join('\n')}\n${indent}}`;
    }
    default:
      return 'unknown';
  }
}

function resolveMessage(document: AsyncApiDocument, message: AsyncApiMessage | { $ref: string }): AsyncApiMessage | undefined {
  if ('$ref' in message && typeof message.$ref === 'string') return document.components.messages[message.$ref.split('/').pop()!];
  return message as AsyncApiMessage;
}

// The module's text. Payload types of one topic name that differ between subscriptions are a
// union in `TopicPayloads`; `SubscriptionPayloads` keeps each subscription's own.
export function renderEventTypes(document: AsyncApiDocument): string {
  const out: string[] = [
    '// Generated from the event channel\'s AsyncAPI document (GET /docs/asyncapi.json) by',
    '// renderEventTypes (src/operations/asyncapi/event-types.ts): edit the settings or the service, not this file.',
    '',
  ];
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    out.push(`${comment(schema.description, '')}export type ${typeName(name)} = ${render(schema)};`, '');
  }

  const byTopic = new Map<string, Set<string>>();
  const subscriptions: { name: string; transport: string; topics: [topic: string, type: string][] }[] = [];
  for (const channel of Object.values(document.channels)) {
    const topics: [string, string][] = [];
    for (const entry of Object.values(channel.messages)) {
      const message = resolveMessage(document, entry);
      const topic = message?.['x-topic'];
      if (typeof topic !== 'string') continue;
      const data = (message!.payload.properties as Record<string, JsonSchema> | undefined)?.data;
      topics.push([topic, render(data, '    ')]);
      if (!byTopic.has(topic)) byTopic.set(topic, new Set());
      byTopic.get(topic)!.add(render(data, '  '));
    }
    subscriptions.push({ name: channel['x-subscription'], transport: channel['x-transport'], topics });
  }

  out.push('// Each topic name to the data its events carry, in any subscription.');
  out.push('export interface TopicPayloads {');
  for (const [topic, types] of byTopic) out.push(`  ${propertyKey(topic)}: ${[...types].join(' | ')};`);
  out.push('}', '');
  out.push('// Each subscription\'s topics to their data.');
  out.push('export interface SubscriptionPayloads {');
  for (const sub of subscriptions) {
    out.push(`  ${propertyKey(sub.name)}: {`);
    for (const [topic, type] of sub.topics) out.push(`    ${propertyKey(topic)}: ${type};`);
    out.push('  };');
  }
  out.push('}', '');
  out.push(
    'export type TopicName = keyof TopicPayloads;',
    '',
    '// A delivery (the Socket.IO event or SSE event `event`): `name` is the topic\'s name too.',
    'export type EventPacket<T extends TopicName = TopicName> = { [K in T]: { topic: K; name: K; data: TopicPayloads[K] } }[T];',
    '',
    '// A delivery of one subscription\'s topic.',
    'export type SubscriptionEventPacket<S extends keyof SubscriptionPayloads, T extends keyof SubscriptionPayloads[S] = keyof SubscriptionPayloads[S]> = {',
    '  [K in T]: { topic: K; name: K; data: SubscriptionPayloads[S][K] };',
    '}[T];',
    '',
  );
  const packets = ['SubscribeRequest', 'SubscribedPacket', 'UnsubscribedPacket', 'ErrorPacket'].filter((name) => !document.components.schemas[name]);
  if (packets.length) throw new Error(`the document has no schema ${packets.join(', ')}`);

  out.push('// Every subscription, with its transport and topics.');
  out.push('export const SUBSCRIPTIONS = [');
  for (const sub of subscriptions) {
    out.push(`  { name: ${literal(sub.name)}, transport: ${literal(sub.transport)}, topics: [${sub.topics.map(([t]) => literal(t)).join(', ')}] },`);
  }
  out.push(`] as const satisfies readonly { name: string; transport: 'websocket' | 'sse'; topics: readonly (keyof TopicPayloads)[] }[];`, '');
  return out.join('\n');
}

import { Environment } from '@marcbachmann/cel-js';

// CEL scripts of event subscriptions: parsed and type-checked once at boot, never eval.
export type Script = (context: Record<string, unknown>) => unknown;

const OPTIONS = { homogeneousAggregateLiterals: false, unlistedVariablesAreDyn: false };
const subscribeEnv = new Environment(OPTIONS).registerVariable('session', 'map').registerVariable('topicName', 'string').registerVariable('dataObjectName', 'string');
const eventEnv = new Environment(OPTIONS)
  .registerVariable('session', 'map')
  .registerVariable('topicName', 'string')
  .registerVariable('dataObjectName', 'string')
  .registerVariable('data', 'map');

export type ScriptKind = 'authScript' | 'filterScript' | 'payloadMapping';

// The script, or the reason it does not compile (syntax, unknown variable, wrong result type).
export function compileScript(kind: ScriptKind, source: string): Script | { error: string } {
  const env = kind === 'authScript' ? subscribeEnv : eventEnv;
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = env.parse(source);
  } catch (error) {
    return { error: firstLine(error) };
  }
  const checked = parsed.check();
  if (!checked.valid) return { error: firstLine(checked.error) };
  const wanted = kind === 'payloadMapping' ? /^(map|dyn)/ : /^(bool|dyn)/;
  if (!wanted.test(checked.type ?? '')) return { error: `must produce a ${kind === 'payloadMapping' ? 'map' : 'bool'}, not ${checked.type}` };
  return (context) => parsed(context);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}

// JSON values into CEL's: whole numbers become ints (BigInt), dates ISO text.
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toCel);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toCel(v)]));
  }
  return value;
}

// And back: ints to numbers, so the payload serialises as JSON.
export function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), fromCel(v)]));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, fromCel(v)]));
  }
  return value;
}

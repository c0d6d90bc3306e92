// The spec's topic names and aliases.
//   API event       {serviceCodename}-<object>-<verb>          e.g. auth-user-created
//   database event  {serviceCodename}-dbevent-<object>-<verb>  e.g. auth-dbevent-user-created
// Object names are compared without regard to case and written lower-case (apiKey → apikey).

export function apiEventTopic(service: string, object: string, verb: string): string {
  return `${service}-${object.toLowerCase()}-${verb.toLowerCase()}`;
}

export function dbEventTopic(service: string, object: string, verb: string): string {
  return `${service}-dbevent-${object.toLowerCase()}-${verb.toLowerCase()}`;
}

// The completion event of an API (a route that changes something), named as in the 2FA message
// codes (`postRegisterstoreuser`), lower-cased: auth-postregisterstoreuser-done.
export function apiDoneTopic(service: string, apiName: string): string {
  return apiEventTopic(service, apiName, 'done');
}

// Sessions that ended (logout, revocation, deactivation): every replica closes their streams.
export function sessionEndedTopic(service: string): string {
  return `${service}-internal-session-ended`;
}

// An audit entry: `<svc>-audit-<action with dots as dashes>` (auth-audit-user-login-failed).
export function auditTopic(service: string, action: string): string {
  return `${service}-audit-${action.replaceAll('.', '-')}`;
}

// Each part of an action starts with a letter or digit (`user.2fa.passed`).
const AUDIT = /^audit:([a-z][A-Za-z0-9]*(?:\.[a-z0-9][A-Za-z0-9]*)+)$/;
const OBJECT_VERB = /^([A-Za-z][A-Za-z0-9]*)[._]([A-Za-z][A-Za-z0-9]*)$/;
const API_DONE = /^([A-Za-z][A-Za-z0-9_-]*):done$/;
const DB_EVENT = /^dbEvent:([A-Za-z][A-Za-z0-9]*):([A-Za-z][A-Za-z0-9]*)$/i;

export type ResolvedTopic = { topic: string; object?: string; apiName?: string } | { error: string };

// An alias to its broker topic: `<object>.<verb>` / `<object>_<verb>` (API event), `<apiName>:done`
// (the API's completion event), `dbEvent:<object>:<verb>` (database event), `audit:<action>` (an
// audit entry, `audit:user.login.failed`); any other text is
// the topic itself. `knownObjects` are compared lower-case.
export function resolveTopicAlias(alias: string, service: string, knownObjects: ReadonlySet<string>): ResolvedTopic {
  const db = DB_EVENT.exec(alias);
  if (db) {
    const object = db[1].toLowerCase();
    if (!knownObjects.has(object)) return { error: `alias "${alias}" names no known data object "${db[1]}"` };
    return { topic: dbEventTopic(service, object, db[2]), object };
  }
  const audit = AUDIT.exec(alias);
  if (audit) return { topic: auditTopic(service, audit[1]), object: 'auditlog' };
  const done = API_DONE.exec(alias);
  if (done) return { topic: apiDoneTopic(service, done[1]), apiName: done[1] };
  const objectVerb = OBJECT_VERB.exec(alias);
  if (objectVerb) {
    const object = objectVerb[1].toLowerCase();
    if (!knownObjects.has(object)) return { error: `alias "${alias}" names no known data object "${objectVerb[1]}"` };
    return { topic: apiEventTopic(service, object, objectVerb[2]), object };
  }
  return { topic: alias };
}

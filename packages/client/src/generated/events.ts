// Written by `npm run console:client` (scripts/console-client.ts), from the shipped settings.
// Generated from the event channel's AsyncAPI document (GET /docs/asyncapi.json) by
// renderEventTypes (src/operations/asyncapi/event-types.ts): edit the settings or the service, not this file.

export type UserResponse = {
  id: string;
  email?: string | null;
  emailVerified?: boolean;
  // E.164.
  mobile?: string | null;
  mobileVerified?: boolean;
  fullname?: string | null;
  name?: string | null;
  surname?: string | null;
  avatar: string;
  // A role, or the list of roles when `usersHaveMultipleRoles` (a number custom role as its number).
  roleId: (string | number | Array<(string | number)>);
  storeId: string;
  isActive: boolean;
  recordVersion: number;
  createdAt: string;
  updatedAt: string;
  _owner: string | null;
  // Preferred language of notifications (BCP 47), once chosen.
  language?: string;
};

export type StoreResponse = {
  id: string;
  name: string;
  codename: string;
  fullname: string;
  avatar: string;
  isActive: boolean;
  ownerId: string | null;
  // Notification language after the user's own (BCP 47), once chosen.
  language?: string;
  recordVersion: number;
  createdAt: string;
  updatedAt: string;
};

export type ApiKeyResponse = {
  id: string;
  name: string;
  // The first characters of the key, to recognise it.
  prefix: string;
  userId: string;
  storeId: string;
  roles: string[];
  permissions: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
};

export type AuditEntryResponse = {
  id: string;
  storeId: string;
  // Place in the store's hash chain, from 1.
  seq: string;
  at: string;
  // See docs/audit-actions.md.
  action: string;
  outcome: "success" | "failure";
  reason: string | null;
  actor: AuditActorResponse;
  target: (AuditTargetResponse | null);
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  sessionId: string | null;
  details: Record<string, unknown> | null;
  prevHash: string | null;
  // HMAC-SHA256 under the chain key `keyId` of `prevHash` and the entry (SHA-256 for an entry without `keyId`).
  hash: string;
  // The chain key the hash is keyed with (its id, never the key); null: written before the chain was keyed.
  keyId: string | null;
};

export type AuditActorResponse = {
  type: "user" | "apiKey" | "machine" | "system" | "anonymous";
  id: string | null;
  roleId: string | null;
};

export type AuditTargetResponse = {
  type: string;
  id: string | null;
};

// The new store as the API shows it, with `storeId` (its id) and `_owner` (its owner).
export type StoreCreatedData = (StoreResponse & {
  storeId: string;
  // The owner (the store's owner): the user a private topic delivers it to, beside the store's admins.
  _owner: string | null;
});

// The user as the API shows it (custom user properties beside its fields); `_owner` is the user that created it.
export type UserData = UserResponse;

// The new API key as the API lists it (never the key itself), with `_owner`, the user it acts as.
export type ApiKeyCreatedData = (ApiKeyResponse & {
  // The key's user.
  _owner: string;
});

// Sessions of one user ended (a logout, signing out other devices, an admin ending them, a new password, a deactivation): ids only, never a token.
export type SessionEndedData = {
  storeId: string;
  userId: string;
  // The sessions that ended; a device that finds its own signs out.
  sessionIds: string[];
  // The user whose sessions ended.
  _owner: string;
};

// An audit entry, once written.
export type AuditEntryData = {
  storeId: string;
  entry: AuditEntryResponse;
};

export type SubscribeRequest = {
  // Topic names of the subscription.
  topics: string[];
};

export type SubscribedPacket = {
  // The topics now flowing (those already held too).
  topics: string[];
  // The topics refused, each once; they are not retried.
  rejected: Array<{
    topic: string;
    reason: "InvalidSession" | "RoleNotAllowed" | "UnknownTopic" | "LoginRequired" | "AdminOnly" | "AuthScriptRejected" | "AuthScriptFailed";
  }>;
};

export type UnsubscribedPacket = {
  // The topics dropped.
  topics: string[];
};

// A refusal, or the end of the connection (a logout, an expiry, a shutdown, a slow reader).
export type ErrorPacket = {
  // The message code, as in HTTP error bodies.
  message: string;
  // The stable code to act on (docs/errors.md).
  errCode: string;
  // A sentence for people.
  detail?: string;
};

// Each topic name to the data its events carry, in any subscription.
export interface TopicPayloads {
  storeCreated: StoreCreatedData;
  userCreated: UserData;
  userUpdated: UserData;
  apiKeyCreated: ApiKeyCreatedData;
  sessionEnded: SessionEndedData;
  "user.login.succeeded": AuditEntryData;
  "user.login.failed": AuditEntryData;
  "user.login.locked": AuditEntryData;
  "user.logout": AuditEntryData;
  "session.ended": AuditEntryData;
  "session.refresh.reused": AuditEntryData;
  "user.password.changed": AuditEntryData;
  "user.password.reset": AuditEntryData;
  "user.verification.completed": AuditEntryData;
  "user.2fa.passed": AuditEntryData;
  "user.2fa.failed": AuditEntryData;
  "user.factor.enrolled": AuditEntryData;
  "user.factor.removed": AuditEntryData;
  "apikey.created": AuditEntryData;
  "apikey.deleted": AuditEntryData;
  "webhook.created": AuditEntryData;
  "webhook.updated": AuditEntryData;
  "webhook.deleted": AuditEntryData;
  "webhook.secret.rotated": AuditEntryData;
  "webhook.disabled": AuditEntryData;
  "oauth.client.created": AuditEntryData;
  "oauth.client.updated": AuditEntryData;
  "oauth.client.deleted": AuditEntryData;
  "oauth.client.secret.rotated": AuditEntryData;
  "oauth.consent.granted": AuditEntryData;
  "oauth.consent.revoked": AuditEntryData;
  "machine.token.refused": AuditEntryData;
  "user.created": AuditEntryData;
  "user.updated": AuditEntryData;
  "user.deactivated": AuditEntryData;
  "user.deleted": AuditEntryData;
  "user.role.changed": AuditEntryData;
  "permission.grant.added": AuditEntryData;
  "permission.grant.removed": AuditEntryData;
  "group.changed": AuditEntryData;
  "store.created": AuditEntryData;
  "store.updated": AuditEntryData;
  "store.deactivated": AuditEntryData;
  "store.activated": AuditEntryData;
  "user.social.linked": AuditEntryData;
  "user.remote.login": AuditEntryData;
}

// Each subscription's topics to their data.
export interface SubscriptionPayloads {
  live: {
    storeCreated: StoreCreatedData;
    userCreated: UserData;
    userUpdated: UserData;
    apiKeyCreated: ApiKeyCreatedData;
    sessionEnded: SessionEndedData;
  };
  "live-sse": {
    storeCreated: StoreCreatedData;
    userCreated: UserData;
    userUpdated: UserData;
    apiKeyCreated: ApiKeyCreatedData;
    sessionEnded: SessionEndedData;
  };
  "console-audit": {
    "user.login.succeeded": AuditEntryData;
    "user.login.failed": AuditEntryData;
    "user.login.locked": AuditEntryData;
    "user.logout": AuditEntryData;
    "session.ended": AuditEntryData;
    "session.refresh.reused": AuditEntryData;
    "user.password.changed": AuditEntryData;
    "user.password.reset": AuditEntryData;
    "user.verification.completed": AuditEntryData;
    "user.2fa.passed": AuditEntryData;
    "user.2fa.failed": AuditEntryData;
    "user.factor.enrolled": AuditEntryData;
    "user.factor.removed": AuditEntryData;
    "apikey.created": AuditEntryData;
    "apikey.deleted": AuditEntryData;
    "webhook.created": AuditEntryData;
    "webhook.updated": AuditEntryData;
    "webhook.deleted": AuditEntryData;
    "webhook.secret.rotated": AuditEntryData;
    "webhook.disabled": AuditEntryData;
    "oauth.client.created": AuditEntryData;
    "oauth.client.updated": AuditEntryData;
    "oauth.client.deleted": AuditEntryData;
    "oauth.client.secret.rotated": AuditEntryData;
    "oauth.consent.granted": AuditEntryData;
    "oauth.consent.revoked": AuditEntryData;
    "machine.token.refused": AuditEntryData;
    "user.created": AuditEntryData;
    "user.updated": AuditEntryData;
    "user.deactivated": AuditEntryData;
    "user.deleted": AuditEntryData;
    "user.role.changed": AuditEntryData;
    "permission.grant.added": AuditEntryData;
    "permission.grant.removed": AuditEntryData;
    "group.changed": AuditEntryData;
    "store.created": AuditEntryData;
    "store.updated": AuditEntryData;
    "store.deactivated": AuditEntryData;
    "store.activated": AuditEntryData;
    "user.social.linked": AuditEntryData;
    "user.remote.login": AuditEntryData;
  };
}

export type TopicName = keyof TopicPayloads;

// A delivery (the Socket.IO event or SSE event `event`): `name` is the topic's name too.
export type EventPacket<T extends TopicName = TopicName> = { [K in T]: { topic: K; name: K; data: TopicPayloads[K] } }[T];

// A delivery of one subscription's topic.
export type SubscriptionEventPacket<S extends keyof SubscriptionPayloads, T extends keyof SubscriptionPayloads[S] = keyof SubscriptionPayloads[S]> = {
  [K in T]: { topic: K; name: K; data: SubscriptionPayloads[S][K] };
}[T];

// Every subscription, with its transport and topics.
export const SUBSCRIPTIONS = [
  { name: "live", transport: "websocket", topics: ["storeCreated", "userCreated", "userUpdated", "apiKeyCreated", "sessionEnded"] },
  { name: "live-sse", transport: "sse", topics: ["storeCreated", "userCreated", "userUpdated", "apiKeyCreated", "sessionEnded"] },
  { name: "console-audit", transport: "sse", topics: ["user.login.succeeded", "user.login.failed", "user.login.locked", "user.logout", "session.ended", "session.refresh.reused", "user.password.changed", "user.password.reset", "user.verification.completed", "user.2fa.passed", "user.2fa.failed", "user.factor.enrolled", "user.factor.removed", "apikey.created", "apikey.deleted", "webhook.created", "webhook.updated", "webhook.deleted", "webhook.secret.rotated", "webhook.disabled", "oauth.client.created", "oauth.client.updated", "oauth.client.deleted", "oauth.client.secret.rotated", "oauth.consent.granted", "oauth.consent.revoked", "machine.token.refused", "user.created", "user.updated", "user.deactivated", "user.deleted", "user.role.changed", "permission.grant.added", "permission.grant.removed", "group.changed", "store.created", "store.updated", "store.deactivated", "store.activated", "user.social.linked", "user.remote.login"] },
] as const satisfies readonly { name: string; transport: 'websocket' | 'sse'; topics: readonly (keyof TopicPayloads)[] }[];

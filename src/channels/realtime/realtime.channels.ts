import { AppError } from '../../kernel/errors.js';
import { hasAdminRole } from '../../kernel/roles.js';
import { ENCRYPTED_PREFIX, PRESENCE_PREFIX, PRIVATE_PREFIX } from './realtime.limits.js';

// Store-scoped channel names: `<kind><storeCodename>_<name>`, kind one of `private-encrypted-`,
// `private-`, `presence-` or none (public). Codenames never hold `_`, so the first `_` ends the
// store part and no store's channel reads as another's. Within a store:
//   `..._user-<userId>[-...]`  that user alone
//   `..._admin[-...]`          the store's administrators
//   anything else              every user of the store
// The kind is read longest prefix first, as the provider reads it.
const KINDS = [ENCRYPTED_PREFIX, PRIVATE_PREFIX, PRESENCE_PREFIX, ''] as const;
const SCOPED = /^([a-z0-9-]{1,40})_([A-Za-z0-9_-]+)$/;

export interface ScopedChannel {
  kind: (typeof KINDS)[number];
  codename: string;
  name: string;
}

export function parseChannel(channel: string): ScopedChannel | undefined {
  const kind = KINDS.find((k) => channel.startsWith(k))!;
  const match = SCOPED.exec(channel.slice(kind.length));
  return match ? { kind, codename: match[1], name: match[2] } : undefined;
}

// May this user of this store join the channel? Throws the reason when not.
export function checkChannelAccess(user: { userId: string; roles: readonly string[] }, storeCodename: string, channel: string): void {
  const scoped = parseChannel(channel);
  if (!scoped || scoped.codename !== storeCodename) {
    throw new AppError('RealtimeChannelForbidden', `channels of this store are named <kind>${storeCodename}_<name>`);
  }
  const { name } = scoped;
  if (isAdminName(name) && !hasAdminRole(user.roles)) {
    throw new AppError('RealtimeChannelForbidden', 'this channel is for the store\'s administrators');
  }
  if (name.startsWith('user-') && name !== `user-${user.userId}` && !name.startsWith(`user-${user.userId}-`)) {
    throw new AppError('RealtimeChannelForbidden', 'this channel belongs to another user');
  }
}

function isAdminName(name: string): boolean {
  return name === 'admin' || name.startsWith('admin-');
}

// A forward rule's channel: `{storeCodename}` in the store position of the scheme above.
export const CHANNEL_TEMPLATE = /^(private-encrypted-|private-|presence-)?\{storeCodename\}_[A-Za-z0-9_-]+$/;

// What is wrong with a forward rule's channel, if anything. Forwarded events carry store data (a
// user event: the user's email and mobile), so the channel is one /realtime/auth signs (a public
// channel is open to anyone holding the app key) and, by the scheme above, its admin channel. A
// rule names no single user, so a user's own channel is out of its reach.
export function forwardChannelProblem(template: string): string | undefined {
  if (!CHANNEL_TEMPLATE.test(template)) {
    return 'must be <kind>{storeCodename}_admin[-<name>] (letters, digits, _ -): events stay in their store';
  }
  const { kind, name } = parseChannel(channelFor(template, 'x'))!;
  if (kind === '') {
    return `"${template}" is public, open to anyone holding the app key: forwarded events go to a ${PRIVATE_PREFIX}, ${ENCRYPTED_PREFIX} or ${PRESENCE_PREFIX} channel`;
  }
  if (!isAdminName(name)) {
    return `"${template}" is open to every user of the store: forwarded events go to its admin channel, ${kind}{storeCodename}_admin[-<name>]`;
  }
  return undefined;
}

export function channelFor(template: string, storeCodename: string): string {
  return template.replace('{storeCodename}', storeCodename);
}

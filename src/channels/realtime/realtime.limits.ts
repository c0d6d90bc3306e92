import { AppError } from '../../kernel/errors.js';

// SPEC "Limits" for the realtime channel integration, checked before the provider is asked.
export const MAX_NAME_LENGTH = 200;
export const MAX_CHANNELS_PER_TRIGGER = 100;
export const MAX_EVENTS_PER_BATCH = 10;
const CHANNEL = /^[A-Za-z0-9_-]+$/;
const SOCKET_ID = /^\d+\.\d+$/;
const INFO_VALUES = new Set(['subscription_count', 'user_count']);
export const PRESENCE_PREFIX = 'presence-';
export const PRIVATE_PREFIX = 'private-';
export const ENCRYPTED_PREFIX = 'private-encrypted-';
// Provider API paths: no query, no `..`, nothing to escape.
const API_PATH = /^\/[A-Za-z0-9_\-/.#:]{0,300}$/;
// Query parameters the request signature owns.
const RESERVED_PARAMS = new Set(['auth_key', 'auth_timestamp', 'auth_version', 'auth_signature', 'body_md5']);

export function channelName(value: unknown, what = 'channel'): string {
  if (typeof value !== 'string' || value === '') throw new AppError('RealtimeInvalidChannel', `${what} is required`);
  if (value.length > MAX_NAME_LENGTH) throw new AppError('RealtimeInvalidChannel', `${what} is longer than ${MAX_NAME_LENGTH} characters`);
  if (!CHANNEL.test(value)) throw new AppError('RealtimeInvalidChannel', `${what} may hold only letters, digits, _ and -`);
  return value;
}

export function eventName(value: unknown, what = 'event'): string {
  if (typeof value !== 'string' || value === '') throw new AppError('RealtimeInvalidEvent', `${what} is required`);
  if (value.length > MAX_NAME_LENGTH) throw new AppError('RealtimeInvalidEvent', `${what} is longer than ${MAX_NAME_LENGTH} characters`);
  return value;
}

export function channelList(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new AppError('RealtimeInvalidChannel', 'channels must be a non-empty array of channel names');
  if (value.length > MAX_CHANNELS_PER_TRIGGER) throw new AppError('RealtimeTooManyChannels', `at most ${MAX_CHANNELS_PER_TRIGGER} channels per trigger`);
  const channels = value.map((c, i) => channelName(c, `channels[${i}]`));
  if (channels.length > 1 && channels.some(isEncrypted)) {
    throw new AppError('RealtimeInvalidChannel', 'an encrypted channel takes its own trigger (its payload is encrypted for that channel alone)');
  }
  return channels;
}

export function eventData(value: unknown, what = 'data'): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new AppError('RealtimeInvalidParameter', `${what} must be an object`);
  return value as Record<string, unknown>;
}

export function socketId(value: unknown, required: boolean, what = 'socketId'): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !SOCKET_ID.test(value) || value.length > 64) throw new AppError('RealtimeInvalidSocketId', `${what} must be a socket id such as 1234.5678`);
  return value;
}

// `subscription_count`, `user_count`, or both comma-joined; `user_count` only where every
// channel is a presence channel (the provider counts users there alone).
export function info(value: unknown, channels: string[] | 'presence' | 'any', what = 'info'): string | undefined {
  if (value === undefined) return undefined;
  const parts = typeof value === 'string' ? value.split(',') : [];
  if (!parts.length || parts.some((p) => !INFO_VALUES.has(p)) || new Set(parts).size !== parts.length) {
    throw new AppError('RealtimeInvalidInfo', `${what} must be subscription_count, user_count, or both comma-joined`);
  }
  const presenceOnly = channels === 'presence' || (Array.isArray(channels) && channels.every((c) => c.startsWith(PRESENCE_PREFIX)));
  if (parts.includes('user_count') && channels !== 'any' && !presenceOnly) {
    throw new AppError('RealtimeInvalidInfo', `${what} user_count applies to presence- channels only`);
  }
  return parts.join(',');
}

export function presenceChannel(value: unknown, what = 'channelName'): string {
  const name = channelName(value, what);
  if (!name.startsWith(PRESENCE_PREFIX)) throw new AppError('RealtimeNotPresenceChannel', `${what} must start with ${PRESENCE_PREFIX}`);
  return name;
}

export function userId(value: unknown, what = 'userId'): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_NAME_LENGTH) throw new AppError('RealtimeInvalidParameter', `${what} must be a string of 1-${MAX_NAME_LENGTH} characters`);
  // It becomes part of a provider path.
  if (!/^[A-Za-z0-9_\-=@,.;]+$/.test(value)) throw new AppError('RealtimeInvalidParameter', `${what} may hold only letters, digits and _ - = @ , . ;`);
  return value;
}

export function batchSize(value: unknown): unknown[] {
  if (!Array.isArray(value) || value.length === 0) throw new AppError('RealtimeInvalidParameter', 'events must be a non-empty array');
  if (value.length > MAX_EVENTS_PER_BATCH) throw new AppError('RealtimeTooManyEvents', `at most ${MAX_EVENTS_PER_BATCH} events per batch`);
  return value;
}

export function apiPath(value: unknown, what = 'path'): string {
  if (typeof value !== 'string' || !API_PATH.test(value) || value.split('/').includes('..')) {
    throw new AppError('RealtimeInvalidParameter', `${what} must be an API path starting with / (letters, digits, _ - / . # :)`);
  }
  return value;
}

export function queryParams(value: unknown, what = 'params'): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new AppError('RealtimeInvalidParameter', `${what} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (RESERVED_PARAMS.has(k)) throw new AppError('RealtimeInvalidParameter', `${what}.${k} is set by the request signature`);
    if (!/^[A-Za-z0-9_]{1,100}$/.test(k)) throw new AppError('RealtimeInvalidParameter', `${what} names must be letters, digits and _`);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new AppError('RealtimeInvalidParameter', `${what}.${k} must be a string, number or boolean`);
    out[k] = String(v);
  }
  return out;
}

export function isEncrypted(channel: string): boolean {
  return channel.startsWith(ENCRYPTED_PREFIX);
}

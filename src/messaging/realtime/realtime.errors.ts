import type { ErrCode } from '../../kernel/errors.js';

// Codes of the outbound realtime channel; their status and message live in the one catalogue
// (src/kernel/errors.ts). Bad input is a 400 before any provider call; a provider failure is a
// 502 carrying `providerStatus` (absent when the provider could not be reached).
export const REALTIME_ERR_CODES = [
  'RealtimeChannelDisabled', // 404: no `realtimeChannel` in the settings
  'RealtimeInvalidChannel', // 400: channel name empty, over 200, or outside A-Z a-z 0-9 _ -
  'RealtimeInvalidEvent', // 400: event name empty or over 200
  'RealtimeTooManyChannels', // 400: over 100 channels in one trigger
  'RealtimeTooManyEvents', // 400: over 10 events in one batch
  'RealtimeNotPresenceChannel', // 400: channel users of a channel without `presence-`
  'RealtimeInvalidInfo', // 400: info other than subscription_count, user_count or both
  'RealtimeInvalidSocketId', // 400: not a provider socket id (digits.digits)
  'RealtimeInvalidParameter', // 400: any other required parameter missing or malformed
  'RealtimeEncryptionDisabled', // 400: an encrypted channel without encryptionMasterKeyBase64
  'RealtimeChannelForbidden', // 403: a channel of another store, or of another user
  'RealtimeWebhookInvalid', // 401: webhook signature, key or body not valid
  'RealtimeProviderError', // 502: the provider answered an error or could not be reached
] as const satisfies readonly ErrCode[];

export type RealtimeErrCode = (typeof REALTIME_ERR_CODES)[number];

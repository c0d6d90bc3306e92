import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// The outbound realtime channel. Bad input is a 400 before any provider call; a provider
// failure is a 502 carrying `providerStatus` (absent when the provider could not be reached).
export const REALTIME_ERRORS = defineErrors('src/channels/realtime/realtime.errors.ts', {
  RealtimeChannelDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_RealtimeChannelDisabled', description: '`realtimeChannel` is not configured' },
  RealtimeInvalidChannel: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidChannel', description: 'a channel name outside 1-200 letters, digits, `_`, `-` (with its kind prefix)' },
  RealtimeInvalidEvent: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidEvent', description: 'an event name outside 1-200 characters' },
  RealtimeTooManyChannels: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeTooManyChannels', description: 'more than 100 channels in one trigger' },
  RealtimeTooManyEvents: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeTooManyEvents', description: 'more than 10 events in one batch' },
  RealtimeNotPresenceChannel: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeNotPresenceChannel', description: 'channel users asked of a channel that is not `presence-`' },
  RealtimeInvalidInfo: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidInfo', description: '`info` other than `subscription_count`, `user_count` (presence only) or both' },
  RealtimeInvalidSocketId: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidSocketId', description: 'a socket id not like `1234.5678`' },
  RealtimeInvalidParameter: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeInvalidParameter', description: 'another missing or malformed realtime parameter' },
  RealtimeEncryptionDisabled: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_RealtimeEncryptionDisabled', description: 'a `private-encrypted-` channel without `encryptionMasterKeyBase64`' },
  RealtimeChannelForbidden: { status: HttpStatus.FORBIDDEN, message: 'errMsg_RealtimeChannelForbidden', description: 'a channel of another store, another user\'s, or an admin channel for a non-admin' },
  RealtimeWebhookInvalid: { status: HttpStatus.UNAUTHORIZED, message: 'errMsg_RealtimeWebhookInvalid', description: 'a webhook whose key or signature does not match the app' },
  RealtimeProviderError: { status: HttpStatus.BAD_GATEWAY, message: 'errMsg_RealtimeProviderError', description: 'the provider failed or could not be reached; `providerStatus` carries its status' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof REALTIME_ERRORS> {}
}

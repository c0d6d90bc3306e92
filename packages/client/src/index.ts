export { createClient, ServiceClient, type ClientOptions, type SignInResult, type SocialResult } from './client.js';
export { ServiceError, isServiceError, type ErrCode, type ClientErrCode } from './errors.js';
export { memoryStorage, webStorage, secureStorage, type TokenStorage, type SecureStoreLike } from './storage.js';
export type { Session, SecondFactor } from './session.js';
export type { SessionChange, SessionListener } from './keeper.js';
export { EventChannel, type EventPacket, type PayloadOf, type SubscribeOptions, type Subscription, type SubscriptionStatus, type ChannelError } from './events.js';
export type { TopicPayloads } from './generated/events.js';
export type { paths, components } from './generated/openapi.js';

import { HttpStatus } from '@nestjs/common';
import { defineErrors, type CodesOf } from '../../kernel/errors.js';

// Webhook endpoints and their deliveries.
export const WEBHOOK_ERRORS = defineErrors('src/channels/webhooks/webhooks.errors.ts', {
  WebhooksDisabled: { status: HttpStatus.NOT_FOUND, message: 'errMsg_WebhooksDisabled', description: 'a webhook route while `webhooks.enabled` is false' },
  WebhookNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_WebhookNotFound', description: 'no such endpoint in this store (or no such delivery of it)' },
  WebhookUrlRefused: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_WebhookUrlRefused', description: 'the URL is not one the service may call: not https (unless `webhooks.allowHttp`), or its host is or resolves to a loopback, private, link-local, CGNAT, multicast or metadata address (unless `webhooks.allowPrivateNetworks`); the message says which' },
  WebhookTopicUnknown: { status: HttpStatus.BAD_REQUEST, message: 'errMsg_WebhookTopicUnknown', description: 'a topic that is not one of the store\'s event topics, `audit:<action>` or `*`; the message names it' },
  WebhookLimitReached: { status: HttpStatus.CONFLICT, message: 'errMsg_WebhookLimitReached', description: 'the store has `webhooks.maxEndpointsPerStore` endpoints already' },
});

declare module '../../kernel/errors.js' {
  interface DeclaredErrors extends CodesOf<typeof WEBHOOK_ERRORS> {}
}

import { Logger } from '@nestjs/common';
import { toAppError } from '../../kernel/error.filter.js';
import { AppError, errorDefinition, type ErrCode } from '../../kernel/errors.js';
import { isDependencyOutage } from '../../platform/outage/outage.js';

// What the event channel sends for anything it refuses or ends: a Socket.IO `error`, an SSE
// `event: error`, and a `connect_error` (`message`, then `{ errCode, detail }` as its data).
// `message` is the message code, derived from the errCode as in the HTTP error bodies, so a
// client switches on it whatever the transport; `detail` is the human sentence.
export interface ChannelError {
  message: string;
  errCode: ErrCode;
  detail?: string;
}

export function channelError(error: AppError): ChannelError {
  return {
    message: error.messageCode ?? errorDefinition(error.errCode).message,
    errCode: error.errCode,
    ...(error.detail !== undefined && { detail: error.detail }),
  };
}

// Any failure as the channel reports it: an AppError as it is, PostgreSQL or Redis out of reach
// as ServiceUnavailable, anything else as InternalError (logged here; the client gets no detail
// of it).
export function asChannelFailure(error: unknown, logger: Logger, context: string, detail: string): AppError {
  const known = toAppError(error);
  if (known) return known;
  if (isDependencyOutage(error)) {
    logger.warn({ err: error }, `${context}: dependency unavailable`);
    return new AppError('ServiceUnavailable', 'a service this one depends on is unavailable; retry shortly');
  }
  logger.error({ err: error }, context);
  return new AppError('InternalError', detail);
}

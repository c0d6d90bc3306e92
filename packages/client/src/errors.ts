import type { components } from './generated/openapi.js';

// Every error code the service answers, from its catalogue (the OpenAPI document's ErrorBody).
export type ErrCode = components['schemas']['ErrorBody']['errCode'];

// Codes the client itself gives, for a failure that is not an answer of the service.
export type ClientErrCode = 'NetworkError' | 'NotSignedIn' | 'UnexpectedAnswer' | 'PasskeyUnavailable';

// One error class for every refusal: the service's `errCode` (typed), the HTTP status as a number
// (the envelope's `status` may be a string or a number), the service's `detail` and `requestId`.
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly errCode: ErrCode | ClientErrCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly requestId: string | undefined;

  constructor(init: { errCode: ErrCode | ClientErrCode; status: number; message?: string; detail?: string | undefined; requestId?: string | undefined; cause?: unknown }) {
    super(init.message ?? init.detail ?? init.errCode, init.cause === undefined ? undefined : { cause: init.cause });
    this.errCode = init.errCode;
    this.status = init.status;
    this.detail = init.detail;
    this.requestId = init.requestId;
  }

  // The error of an answer that is not 2xx, from its body (the envelope, or anything else).
  static fromAnswer(status: number, body: unknown): ServiceError {
    const b = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    const errCode = typeof b.errCode === 'string' ? (b.errCode as ErrCode) : status === 401 ? 'Unauthorized' : 'UnexpectedAnswer';
    return new ServiceError({
      errCode,
      status,
      message: typeof b.message === 'string' ? b.message : `The service answered ${status}`,
      detail: typeof b.detail === 'string' ? b.detail : undefined,
      requestId: typeof b.requestId === 'string' ? b.requestId : undefined,
    });
  }
}

export function isServiceError(error: unknown, code?: ErrCode | ClientErrCode): error is ServiceError {
  return error instanceof ServiceError && (code === undefined || error.errCode === code);
}

import { HttpException } from '@nestjs/common';

// The service's error envelope, so that a client handles a refusal here as it does there.
export interface SvcErrorBody {
  result: 'ERR';
  status: number;
  message: string;
  errCode: string;
  detail?: string;
}

// A refusal with the service's status and errCode (`Unauthorized`, `Forbidden`,
// `PermissionDenied`, `TenantMismatch`, ...). Nest's default exception filter sends the envelope
// as the body.
export class SvcAuthError extends HttpException {
  readonly errCode: string;
  readonly body: SvcErrorBody;

  constructor(status: number, errCode: string, detail?: string, message = `errMsg_${errCode}`) {
    const body: SvcErrorBody = { result: 'ERR', status, message, errCode, ...(detail !== undefined && { detail }) };
    super(body, status);
    this.errCode = errCode;
    this.body = body;
  }

  static unauthorized(detail: string): SvcAuthError {
    return new SvcAuthError(401, 'Unauthorized', detail);
  }

  static forbidden(detail: string): SvcAuthError {
    return new SvcAuthError(403, 'Forbidden', detail);
  }

  // The service's own refusal (a 4xx envelope), as it gave it.
  static fromService(status: number, body: unknown): SvcAuthError {
    const b = (body ?? {}) as Partial<SvcErrorBody>;
    if (typeof b.errCode === 'string') return new SvcAuthError(status, b.errCode, typeof b.detail === 'string' ? b.detail : undefined, typeof b.message === 'string' ? b.message : undefined);
    // `/currentuser`'s `{ status: 'ERR', message: 'No login found' }`, or no envelope at all.
    return status === 401 ? SvcAuthError.unauthorized('the session has ended') : new SvcAuthError(status, status === 403 ? 'Forbidden' : 'ServiceUnavailable');
  }

  static unavailable(detail: string): SvcAuthError {
    return new SvcAuthError(503, 'ServiceUnavailable', detail);
  }
}

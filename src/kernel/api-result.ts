import { applyDecorators, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtraModels, ApiProperty, ApiResponse } from '@nestjs/swagger';

export interface ApiResultSpec {
  // The data: under the envelope's `dataName` on business routes, the whole body elsewhere.
  type: Type<unknown>;
  list: boolean;
  // Further top-level properties beside the data (e.g. `store` on owner registration).
  extra: Record<string, Type<unknown>>;
}

export const ApiResultMeta = Reflector.createDecorator<ApiResultSpec>();

// What a route answers on success, for the OpenAPI document. Everything else an operation
// needs there (envelope, error answers, path parameters, security) is derived from the route's
// own metadata (@Envelope, @Public / @Authenticated, rate limits) when the document is built.
export function ApiResult(type: Type<unknown> | [Type<unknown>], extra: Record<string, Type<unknown>> = {}): MethodDecorator {
  const list = Array.isArray(type);
  const item = list ? type[0] : type;
  return applyDecorators(ApiExtraModels(item, ...Object.values(extra)), ApiResultMeta({ type: item, list, extra }));
}

// The data of a deletion: the id of what was deleted.
export class DeletedResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
}

const FAILURES = 'apiFailures';

// Error statuses a route can answer beyond those derived from its policy and method, declared
// by the decorators that cause them (rate limits: 429, anti-bot challenges: 403...).
export function ApiFailures(...statuses: number[]): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const known = (Reflect.getMetadata(FAILURES, handler) as number[] | undefined) ?? [];
    Reflect.defineMetadata(FAILURES, [...new Set([...known, ...statuses])], handler);
    return descriptor;
  };
}

export function apiFailures(handler: object): number[] {
  return (Reflect.getMetadata(FAILURES, handler) as number[] | undefined) ?? [];
}

// A route that answers with a redirect (302 and `Location`), for the OpenAPI document.
export function ApiRedirect(description: string): MethodDecorator {
  return ApiResponse({ status: 302, description, headers: { Location: { description: 'where the browser goes next', schema: { type: 'string', format: 'uri' } } } });
}

// A route that hands out a login's access token: besides the body, as cookies and as the
// `<project>-access-token[-<codename>]` header, which the document lists on its success answer.
// `when`: the condition, where the route does not always do it.
export const ApiAccessTokenHeaderMeta = Reflector.createDecorator<{ when?: string }>();

export function ApiAccessTokenHeader(when?: string): MethodDecorator {
  return ApiAccessTokenHeaderMeta({ when });
}

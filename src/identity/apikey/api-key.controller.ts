import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { ApiResult, DeletedResponse } from '../../kernel/api-result.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, USER_ONLY, USER_OR_API_KEY } from '../../kernel/policy.js';
import { auditContext } from '../../kernel/audit.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { P } from '../../kernel/service-permissions.js';
import { ApiKeyIdParam, ApiKeyResponse, CreateApiKeyInput, CreatedApiKeyResponse, toApiKeyResponse, ValidateApiKeyResponse } from './api-key.dto.js';
import { ApiKeyService } from './api-key.service.js';

class ValidateApiKeyInput {
  @IsString()
  @MaxLength(200)
  apiKey: string;
}

@ApiTags('api keys')
@Controller('auth-api')
export class ApiKeyController {
  constructor(private readonly apiKeys: ApiKeyService) {}

  @Post('v1/apikeys')
  @Authenticated({ principals: USER_ONLY, permission: P.apiKeysCreate })
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'apiKey', action: 'create' })
  @ApiOperation({ summary: 'Create an API key in your own store; the plaintext `key` is shown in this response only. Another store targeted (a super administrator\'s): 403 ApiKeyOutsideOwnStore.' })
  @ApiResult(CreatedApiKeyResponse)
  async create(@Req() req: ContextRequest, @Body() input: CreateApiKeyInput): Promise<Enveloped<unknown>> {
    const { record, key } = await this.apiKeys.create(req.ctx.session!, req.ctx.store!, input, auditContext(req));
    return { data: { ...toApiKeyResponse(record), key } };
  }

  @Get('v1/apikeys')
  @Authenticated({ principals: USER_OR_API_KEY, permission: P.apiKeysList })
  @Envelope({ dataName: 'apiKeys', action: 'list' })
  @ApiOperation({ summary: 'Your API keys (store admins: the store\'s), by prefix, never the key; newest first, paged.' })
  @ApiResult([ApiKeyResponse])
  async list(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const [keys, total, page] = await this.apiKeys.list(ctx.session!, ctx.store!.id, query);
    return { data: keys.map(toApiKeyResponse), paging: paging(page, total) };
  }

  @Delete('v1/apikeys/:id')
  @Authenticated({ principals: USER_ONLY, permission: P.apiKeysDelete })
  @Envelope({ dataName: 'apiKey', action: 'delete' })
  @ApiOperation({ summary: 'Delete an API key; its cached sessions end at once.' })
  @ApiResult(DeletedResponse)
  async delete(@Req() req: ContextRequest, @Param() params: ApiKeyIdParam): Promise<Enveloped<unknown>> {
    await this.apiKeys.delete(req.ctx.session!, req.ctx.store!.id, params.id, auditContext(req));
    return { data: { id: params.id } };
  }

  // For other services, with a machine token: the session of an API key, or 401.
  @Post('validateapikey')
  @Authenticated({ principals: { user: false, apiKey: false, machine: true }, permission: null })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Internal: the session of an API key (machine token required).' })
  @ApiResult(ValidateApiKeyResponse)
  async validate(@Body() input: ValidateApiKeyInput) {
    const session = await this.apiKeys.authenticate(input.apiKey);
    return { status: 'OK', session };
  }
}

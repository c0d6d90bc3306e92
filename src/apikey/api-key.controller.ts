import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Envelope, type Enveloped } from '../common/envelope.js';
import { Authenticated, USER_ONLY } from '../common/policy.js';
import { Ctx, type RequestContext } from '../common/request-context.js';
import { ApiKeyIdParam, CreateApiKeyInput, toApiKeyResponse } from './api-key.dto.js';
import { ApiKeyService } from './api-key.service.js';

class ValidateApiKeyInput {
  @IsString()
  @MaxLength(200)
  apiKey: string;
}

@ApiBearerAuth()
@ApiTags('api keys')
@Controller('auth-api')
export class ApiKeyController {
  constructor(private readonly apiKeys: ApiKeyService) {}

  @Post('v1/apikeys')
  @Authenticated({ principals: USER_ONLY })
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'apiKey', action: 'create' })
  @ApiOperation({ summary: 'Create an API key; the plaintext `key` is shown in this response only.' })
  async create(@Ctx() ctx: RequestContext, @Body() input: CreateApiKeyInput): Promise<Enveloped<unknown>> {
    const { record, key } = await this.apiKeys.create(ctx.session!, input);
    return { data: { ...toApiKeyResponse(record), key } };
  }

  @Get('v1/apikeys')
  @Authenticated({ principals: USER_ONLY })
  @Envelope({ dataName: 'apiKeys', action: 'list' })
  @ApiOperation({ summary: 'Your API keys (store admins: the store\'s), by prefix, never the key.' })
  async list(@Ctx() ctx: RequestContext): Promise<Enveloped<unknown[]>> {
    const keys = await this.apiKeys.list(ctx.session!, ctx.store!.id);
    return { data: keys.map(toApiKeyResponse), paging: { pageNumber: 1, pageRowCount: keys.length, totalRowCount: keys.length, pageCount: 1 } };
  }

  @Delete('v1/apikeys/:id')
  @Authenticated({ principals: USER_ONLY })
  @Envelope({ dataName: 'apiKey', action: 'delete' })
  @ApiOperation({ summary: 'Delete an API key; its cached sessions end at once.' })
  async delete(@Ctx() ctx: RequestContext, @Param() params: ApiKeyIdParam): Promise<Enveloped<unknown>> {
    await this.apiKeys.delete(ctx.session!, ctx.store!.id, params.id);
    return { data: { id: params.id } };
  }

  // For other services, with a machine token: the session of an API key, or 401.
  @Post('validateapikey')
  @Authenticated({ principals: { user: false, apiKey: false, machine: true } })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Internal: the session of an API key (machine token required).' })
  async validate(@Body() input: ValidateApiKeyInput) {
    const session = await this.apiKeys.authenticate(input.apiKey);
    return { status: 'OK', session };
  }
}

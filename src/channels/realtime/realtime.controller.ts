import { Body, Controller, HttpCode, HttpStatus, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { Authenticated, Public, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { RealtimeAccessService } from './realtime-access.service.js';
import { ChannelAuthInput, ChannelAuthResponse, UserAuthInput, UserAuthResponse, WebhookResponse } from './realtime.dto.js';

// The Pusher-protocol client endpoints pusher-js calls (they take form-encoded bodies, as
// pusher-js sends them, or JSON), and the provider's webhook.
export const REALTIME_FORM_ROUTES = ['/auth-api/realtime/auth', '/auth-api/realtime/user-auth'];

@ApiTags('realtime')
@Controller('auth-api/realtime')
export class RealtimeController {
  constructor(private readonly realtime: RealtimeAccessService) {}

  @Post('auth')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @HttpCode(HttpStatus.OK)
  @ApiResult(ChannelAuthResponse)
  @ApiOperation({ summary: 'Authorize a private-/presence- channel of your store: { auth, channel_data?, shared_secret? }.' })
  authorizeChannel(@Ctx() ctx: RequestContext, @Body() input: ChannelAuthInput) {
    return this.realtime.authorizeChannel(ctx.session!, ctx.store!.codename, input.socket_id, input.channel_name);
  }

  @Post('user-auth')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @HttpCode(HttpStatus.OK)
  @ApiResult(UserAuthResponse)
  @ApiOperation({ summary: 'Authenticate your connection as your user: { auth, user_data }.' })
  authenticateUser(@Ctx() ctx: RequestContext, @Body() input: UserAuthInput) {
    return this.realtime.authenticateUser(ctx.session!, input.socket_id);
  }

  // The provider is the caller: its signature over the exact body is the credential.
  @Post('webhook')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiResult(WebhookResponse)
  @ApiFailures(401) // RealtimeWebhookInvalid
  @ApiOperation({ summary: 'Provider webhook: checked against the app secret, then published as `<svc>-realtime-webhook` events.' })
  async webhook(@Req() req: ContextRequest) {
    return { status: 'OK', ...(await this.realtime.receiveWebhook(req.headers, req.rawBody)) };
  }
}

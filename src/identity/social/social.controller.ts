import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthService } from '../auth/auth.service.js';
import { ApiAccessTokenHeader, ApiRedirect, ApiResult } from '../../kernel/api-result.js';
import { Public } from '../../kernel/policy.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { SocialLoginResultInput, SocialLoginResultResponse, SocialStartQuery } from './social.dto.js';
import { SocialPassportGuard, type SocialOutcome } from './social.guard.js';
import { SocialService } from './social.service.js';
import { TokenCookies } from '../token/token-cookies.js';

@ApiTags('social login')
@Controller('auth-api/auth')
export class SocialController {
  constructor(
    private readonly social: SocialService,
    private readonly auth: AuthService,
    private readonly cookies: TokenCookies,
  ) {}

  // The guard answers with the redirect to the provider; this body never runs.
  @Get(':provider')
  @Public()
  @UseGuards(SocialPassportGuard)
  @ApiOperation({ summary: 'Start social login with a provider for the targeted store (redirects to the provider).' })
  @ApiRedirect('to the provider')
  start(@Query() _query: SocialStartQuery): void {}

  @Get(':provider/callback')
  @Public()
  @UseGuards(SocialPassportGuard)
  @ApiOperation({ summary: "The provider's return: redirects to the client with `provider` and `socialCode`, or `error`." })
  @ApiRedirect('to the client, with `provider` and `socialCode`, or `error`')
  callback(@Req() req: ContextRequest & { user?: SocialOutcome }, @Res() res: Response): Promise<void> {
    return this.land(req.user!, res);
  }

  @Post(':provider/callback')
  @Public()
  @UseGuards(SocialPassportGuard)
  @ApiOperation({ summary: "The provider's return as a form post (Apple's `form_post`); answers as the GET callback." })
  @ApiRedirect('to the client, with `provider` and `socialCode`, or `error`')
  formCallback(@Req() req: ContextRequest & { user?: SocialOutcome }, @Res() res: Response): Promise<void> {
    return this.land(req.user!, res);
  }

  private async land(outcome: SocialOutcome, res: Response): Promise<void> {
    const target =
      'profile' in outcome && outcome.flow
        ? await this.social.finishFlow(outcome.flow, outcome.profile)
        : this.social.failureRedirect(outcome.provider, 'error' in outcome ? outcome.error : 'login_failed', outcome.flow);
    res.redirect(HttpStatus.FOUND, target);
  }

  @Post('social-login-result')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiResult(SocialLoginResultResponse)
  @ApiAccessTokenHeader('when the answer is a login (not `RegisterNeededForSocialLogin`)')
  @ApiOperation({ summary: 'Exchange a socialCode: the session (as login), or `RegisterNeededForSocialLogin` with a new socialCode.' })
  async result(@Req() req: ContextRequest, @Body() input: SocialLoginResultInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const outcome = await this.social.result(store, input.socialCode, { ip: req.ip, userAgent: req.headers['user-agent'] });
    if (outcome.type !== 'login') return outcome;
    this.cookies.send(res, store, outcome.login.tokens);
    return { ...this.auth.toResponse(outcome.login), ...(outcome.ssoTime !== undefined && { ssoTime: outcome.ssoTime }) };
  }
}

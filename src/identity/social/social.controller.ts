import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuthService } from '../auth/auth.service.js';
import { ApiAccessTokenHeader, ApiRedirect, ApiResult } from '../../kernel/api-result.js';
import { Public } from '../../kernel/policy.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { SocialLoginResultInput, SocialLoginResultResponse } from './social.dto.js';
import { SocialService, type SocialRequest } from './social.service.js';
import { TokenCookies } from '../token/token-cookies.js';

@ApiTags('social login')
@Controller('auth-api/auth')
export class SocialController {
  constructor(
    private readonly social: SocialService,
    private readonly auth: AuthService,
    private readonly cookies: TokenCookies,
  ) {}

  // The query is read here, not validated as a DTO: a provider's link may carry parameters of its own.
  @Get(':provider')
  @Public()
  @ApiOperation({ summary: 'Start social login with a provider for the targeted store (redirects to the provider).' })
  @ApiQuery({ name: 'redirectUrl', required: false, type: String, description: 'Where the browser lands afterwards: one of the configured addresses (settings `socialLogin.redirectUrl`, `socialLogin.redirectUrls`), exactly. Absent: the first of them.' })
  @ApiRedirect('to the provider')
  async start(@Param('provider') provider: string, @Req() req: ContextRequest, @Res() res: Response): Promise<void> {
    const requested = req.query.redirectUrl;
    // Anything but one string (a repeated parameter) is no configured address.
    const redirectUrl = typeof requested === 'string' ? requested : requested === undefined ? undefined : '';
    res.redirect(HttpStatus.FOUND, await this.social.start(req.ctx.store!, provider, redirectUrl, signIn(req)));
  }

  @Get(':provider/callback')
  @Public()
  @ApiOperation({ summary: "The provider's return: redirects to the client with `provider` and `socialCode`, or `error`." })
  @ApiRedirect('to the client, with `provider` and `socialCode`, or `error`')
  async callback(@Param('provider') provider: string, @Req() req: ContextRequest, @Res() res: Response): Promise<void> {
    res.redirect(HttpStatus.FOUND, await this.social.callback(provider, signIn(req)));
  }

  @Post(':provider/callback')
  @Public()
  @ApiOperation({ summary: "The provider's return as a form post (Apple's `form_post`); answers as the GET callback." })
  @ApiRedirect('to the client, with `provider` and `socialCode`, or `error`')
  async formCallback(@Param('provider') provider: string, @Req() req: ContextRequest, @Res() res: Response): Promise<void> {
    res.redirect(HttpStatus.FOUND, await this.social.callback(provider, signIn(req)));
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

// The request as the sign-in flow reads it: a return's parameters from its query, or from its
// form post's fields when the query lacks them.
function signIn(req: ContextRequest): SocialRequest {
  const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  return { origin: `${req.protocol}://${req.get('host')}`, requestId: req.ctx.requestId, params: { ...body, ...req.query }, raw: req };
}

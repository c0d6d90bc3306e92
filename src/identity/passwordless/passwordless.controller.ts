import { Body, Controller, Headers, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAccessTokenHeader, ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { auditContext } from '../../kernel/audit.js';
import { Public } from '../../kernel/policy.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AntiBotProtected } from '../antibot/antibot.guard.js';
import { AuthService } from '../auth/auth.service.js';
import { LoginResponse } from '../auth/index.js';
import { TokenCookies } from '../token/token-cookies.js';
import { PasswordlessCompleteInput, PasswordlessStartAnswer, PasswordlessStartInput } from './passwordless.dto.js';
import { PasswordlessService } from './passwordless.service.js';

// Sign-in by a one-time code or link sent to the email or mobile. Both routes answer 404
// PasswordlessLoginDisabled while settings `passwordlessLogin.enabled` is false.
@ApiTags('passwordless')
@Controller('auth-api/passwordless')
export class PasswordlessController {
  constructor(
    private readonly passwordless: PasswordlessService,
    private readonly auth: AuthService,
    private readonly cookies: TokenCookies,
  ) {}

  @Post('start')
  @Public()
  @AntiBotProtected()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Send a sign-in code and/or link to the email or mobile, in the targeted store. The same answer whether an account has the address or not.' })
  @ApiResult(PasswordlessStartAnswer)
  @ApiFailures(400, 404, 429) // ValidationFailed; PasswordlessLoginDisabled, PasswordlessChannelDisabled; TooManyRequests, VerificationResendTooSoon
  start(@Req() req: ContextRequest, @Body() input: PasswordlessStartInput, @Headers('accept-language') lang?: string) {
    return this.passwordless.start(req.ctx.store!, input, { ip: req.ip, userAgent: req.headers['user-agent'] }, lang);
  }

  // The same answer as POST /login: second factors the user has still follow.
  @Post('complete')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Sign in with the code (and its email or mobile) or the link\'s token: the session, its access token (and refresh token when they are on), cookies and a header, as `/login` answers.' })
  @ApiResult(LoginResponse)
  @ApiAccessTokenHeader()
  @ApiFailures(400, 403, 404, 429) // ValidationFailed; VerificationCodeInvalid, VerificationCodeExpired, UserInactive...; PasswordlessLoginDisabled...; VerificationAttemptsExceeded, TooManyRequests
  async complete(@Req() req: ContextRequest, @Body() input: PasswordlessCompleteInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const result = await this.passwordless.complete(store, input, { ip: req.ip, userAgent: req.headers['user-agent'] }, auditContext(req), req.ctx.origin);
    this.cookies.send(res, store, result.tokens);
    return this.auth.toResponse(result);
  }
}

import { Body, Controller, Headers, HttpCode, HttpStatus, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AntiBotProtected } from '../antibot/antibot.guard.js';
import { ApiAccessTokenHeader, ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { Authenticated, Public, USER_ONLY } from '../../kernel/policy.js';
import { Ctx, type RequestContext } from '../../kernel/request-context.js';
import type { SessionData } from '../../kernel/principal.js';
import { CompleteAnswer, CompleteSecondFactorInput, CompleteVerificationInput, StartAnswer, StartVerificationInput } from './verification.dto.js';
import { VerificationService } from './verification.service.js';
import { SecondFactorDoneResponse } from '../token/index.js';
import { SecondFactorAnswer } from '../token/second-factor.js';

const BASE = 'verification-services';
// Open to a login whose second factor is pending: that is what they complete.
const SECOND_FACTOR = { principals: USER_ONLY, permission: null, during2FA: true } as const;

// The second-factor routes come first: the `:flow` routes below would match their paths too
// (and refuse them, as their flows need a login).
@ApiTags('verification')
@Controller('auth-api')
export class VerificationController {
  constructor(
    private readonly verification: VerificationService,
    private readonly secondFactor: SecondFactorAnswer,
  ) {}

  @Post(`${BASE}/email-2factor-verification/start`)
  @Authenticated(SECOND_FACTOR)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Send a code to the email of the logged-in user, for the pending email second factor.' })
  @ApiResult(StartAnswer)
  @ApiFailures(429)
  startEmail2FA(@Ctx() ctx: RequestContext, @Headers('accept-language') lang?: string) {
    return this.verification.start(ctx, 'email-2factor-verification', {}, lang);
  }

  @Post(`${BASE}/email-2factor-verification/complete`)
  @Authenticated(SECOND_FACTOR)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Complete the email second factor: the session without the pending flag.' })
  @ApiResult(SecondFactorDoneResponse)
  @ApiAccessTokenHeader('with refresh tokens on (`accessTokenMinutes`), when the completed login gets a fresh pair')
  @ApiFailures(429)
  async completeEmail2FA(@Ctx() ctx: RequestContext, @Body() input: CompleteSecondFactorInput, @Res({ passthrough: true }) res: Response, @Headers('accept-language') lang?: string) {
    const session = (await this.verification.complete(ctx, 'email-2factor-verification', input, lang)) as SessionData;
    return this.secondFactor.send(ctx.store!, session, res);
  }

  @Post(`${BASE}/mobile-2factor-verification/start`)
  @Authenticated(SECOND_FACTOR)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Send a code to the mobile of the logged-in user, for the pending mobile second factor.' })
  @ApiResult(StartAnswer)
  @ApiFailures(429)
  startMobile2FA(@Ctx() ctx: RequestContext, @Headers('accept-language') lang?: string) {
    return this.verification.start(ctx, 'mobile-2factor-verification', {}, lang);
  }

  @Post(`${BASE}/mobile-2factor-verification/complete`)
  @Authenticated(SECOND_FACTOR)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Complete the mobile second factor: the session without the pending flag.' })
  @ApiResult(SecondFactorDoneResponse)
  @ApiAccessTokenHeader('with refresh tokens on (`accessTokenMinutes`), when the completed login gets a fresh pair')
  @ApiFailures(429)
  async completeMobile2FA(@Ctx() ctx: RequestContext, @Body() input: CompleteSecondFactorInput, @Res({ passthrough: true }) res: Response, @Headers('accept-language') lang?: string) {
    const session = (await this.verification.complete(ctx, 'mobile-2factor-verification', input, lang)) as SessionData;
    return this.secondFactor.send(ctx.store!, session, res);
  }

  @Post(`${BASE}/:flow/start`)
  @Public()
  @AntiBotProtected()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Send a code or link: email-verification, mobile-verification, password-reset-by-email, password-reset-by-mobile.' })
  @ApiResult(StartAnswer)
  @ApiFailures(429)
  start(@Ctx() ctx: RequestContext, @Param('flow') flow: string, @Body() input: StartVerificationInput, @Headers('accept-language') lang?: string) {
    return this.verification.start(ctx, flow, input, lang);
  }

  @Post(`${BASE}/:flow/complete`)
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Submit the code (and the new password for a reset).' })
  @ApiResult(CompleteAnswer)
  @ApiFailures(429)
  complete(@Ctx() ctx: RequestContext, @Param('flow') flow: string, @Body() input: CompleteVerificationInput, @Headers('accept-language') lang?: string) {
    return this.verification.complete(ctx, flow, input, lang);
  }
}

import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAccessTokenHeader, ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { Authenticated, USER_ONLY } from '../../kernel/policy.js';
import { auditContextOf } from '../../kernel/audit.js';
import { Ctx, type RequestContext } from '../../kernel/request-context.js';
import { SecondFactorDoneResponse } from '../token/index.js';
import { SecondFactorAnswer } from '../token/second-factor.js';
import { DisableTotpInput, MfaFactorsResponse, MfaStatusResponse, RecoveryCodeInput, RecoveryCodesResponse, TotpCodeInput, TotpConfirmedResponse, TotpSetupResponse } from './mfa.dto.js';
import { MfaService } from './mfa.service.js';

// The caller's own factors. Enrolment stays open to a login whose role requires an app factor it
// has not enrolled yet (mfaRequiredForRoles); the sign-in's factor is open while it is pending.
const ENROLMENT = { principals: USER_ONLY, permission: null, mfaEnrollment: true } as const;
const SIGN_IN = { principals: USER_ONLY, permission: null, during2FA: true } as const;
const OWN = { principals: USER_ONLY, permission: null } as const;

@ApiTags('mfa')
@Controller('auth-api/mfa')
export class MfaController {
  constructor(
    private readonly mfa: MfaService,
    private readonly secondFactor: SecondFactorAnswer,
  ) {}

  @Get()
  @Authenticated(ENROLMENT)
  @ApiOperation({ summary: 'Your factors: authenticator app on or off, passkeys, recovery codes left (never a secret).' })
  @ApiResult(MfaFactorsResponse)
  factors(@Ctx() ctx: RequestContext) {
    return this.mfa.factorsOf(ctx.session!);
  }

  @Post('totp/setup')
  @Authenticated(ENROLMENT)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Start enrolling an authenticator app: a new secret, its key URI and QR code (pending until confirmed).' })
  @ApiResult(TotpSetupResponse)
  setup(@Ctx() ctx: RequestContext) {
    return this.mfa.setup(ctx.session!, ctx.store!);
  }

  @Post('totp/confirm')
  @Authenticated(ENROLMENT)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Confirm the app with its first code: it is enabled, the 10 recovery codes are shown this once, and your other sessions end (they began without it). When your role required this enrolment, `session` completes the sign-in with fresh tokens.',
  })
  @ApiResult(TotpConfirmedResponse)
  @ApiFailures(429)
  async confirm(@Ctx() ctx: RequestContext, @Body() input: TotpCodeInput, @Res({ passthrough: true }) res: Response) {
    const { recoveryCodes, session } = await this.mfa.confirm(ctx.session!, input.code, auditContextOf(ctx));
    return { status: 'OK', recoveryCodes, ...(session && { session: await this.secondFactor.send(ctx.store!, session, res) }) };
  }

  @Post('totp/verify')
  @Authenticated(SIGN_IN)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Complete the pending sign-in with a code of the app: the session without the pending flag.' })
  @ApiResult(SecondFactorDoneResponse)
  @ApiAccessTokenHeader('with refresh tokens on (`accessTokenMinutes`), when the completed login gets a fresh pair')
  @ApiFailures(429)
  async verify(@Ctx() ctx: RequestContext, @Body() input: TotpCodeInput, @Res({ passthrough: true }) res: Response) {
    const session = await this.mfa.verify(ctx.session!, input.code, auditContextOf(ctx));
    return this.secondFactor.send(ctx.store!, session, res);
  }

  @Post('recovery')
  @Authenticated(SIGN_IN)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Complete the pending sign-in with a recovery code in place of the app (each code works once).' })
  @ApiResult(SecondFactorDoneResponse)
  @ApiAccessTokenHeader('with refresh tokens on (`accessTokenMinutes`), when the completed login gets a fresh pair')
  @ApiFailures(429)
  async recover(@Ctx() ctx: RequestContext, @Body() input: RecoveryCodeInput, @Res({ passthrough: true }) res: Response) {
    const session = await this.mfa.recover(ctx.session!, input.code, auditContextOf(ctx));
    return this.secondFactor.send(ctx.store!, session, res);
  }

  @Post('recovery/regenerate')
  @Authenticated(OWN)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'New recovery codes against a current code of the app; the earlier ones stop working.' })
  @ApiResult(RecoveryCodesResponse)
  @ApiFailures(429)
  async regenerate(@Ctx() ctx: RequestContext, @Body() input: TotpCodeInput) {
    return { status: 'OK', recoveryCodes: await this.mfa.regenerateRecoveryCodes(ctx.session!, input.code, auditContextOf(ctx)) };
  }

  @Delete('totp')
  @Authenticated(OWN)
  @ApiOperation({ summary: 'Remove your authenticator app and its recovery codes, with a current code or your password.' })
  @ApiResult(MfaStatusResponse)
  @ApiFailures(429)
  async disable(@Ctx() ctx: RequestContext, @Body() input: DisableTotpInput) {
    await this.mfa.disable(ctx.session!, input, auditContextOf(ctx));
    return { status: 'OK' };
  }
}

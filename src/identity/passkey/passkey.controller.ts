import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAccessTokenHeader, ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { Authenticated, Public, USER_ONLY } from '../../kernel/policy.js';
import { auditContextOf } from '../../kernel/audit.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { LoginResponse } from '../auth/index.js';
import { SecondFactorDoneResponse } from '../token/index.js';
import { SecondFactorAnswer } from '../token/second-factor.js';
import { TokenCookies } from '../token/token-cookies.js';
import {
  PasskeyAnswer,
  PasskeyCreationOptions,
  PasskeyDeletedResponse,
  PasskeyEnrolledAnswer,
  PasskeyIdParam,
  PasskeyListResponse,
  PasskeyLoginInput,
  PasskeyRegisterInput,
  PasskeyRequestOptions,
  RenamePasskeyInput,
  toPasskeyResponse,
} from './passkey.dto.js';
import { PasskeyService } from './passkey.service.js';

// Passkeys (WebAuthn). Every route answers 404 WebAuthnNotConfigured while settings `webauthn`
// is null.
@ApiTags('passkeys')
@Controller('auth-api/passkeys')
export class PasskeyController {
  constructor(
    private readonly passkeys: PasskeyService,
    private readonly cookies: TokenCookies,
    private readonly secondFactorAnswer: SecondFactorAnswer,
  ) {}

  // Open to a user who must still enrol an app factor: this is how they enrol one.
  @Post('register/options')
  @Authenticated({ principals: USER_ONLY, permission: null, mfaEnrollment: true })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Start enrolling a passkey: the creation options for `navigator.credentials.create()` (resident key preferred, user verification required, your passkeys excluded). Its challenge serves once, for 5 minutes.' })
  @ApiResult(PasskeyCreationOptions)
  @ApiFailures(404) // WebAuthnNotConfigured
  registerOptions(@Ctx() ctx: RequestContext) {
    return this.passkeys.registrationOptions(ctx.session!);
  }

  @Post('register/verify')
  @Authenticated({ principals: USER_ONLY, permission: null, mfaEnrollment: true })
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({
    summary:
      'Finish enrolling: the authenticator\'s answer is verified and the passkey stored. Your first second factor (no authenticator app either) ends your other sessions (they began without one). When your role required this enrolment, `session` completes the sign-in with fresh tokens.',
  })
  @ApiResult(PasskeyEnrolledAnswer)
  @ApiFailures(400, 404) // PasskeyVerificationFailed, PasskeyChallengeExpired; WebAuthnNotConfigured
  async registerVerify(@Ctx() ctx: RequestContext, @Body() input: PasskeyRegisterInput, @Res({ passthrough: true }) res: Response) {
    const { passkey, session } = await this.passkeys.register(ctx.session!, input, auditContextOf(ctx));
    return { status: 'OK', passkey: toPasskeyResponse(passkey), ...(session && { session: await this.secondFactorAnswer.send(ctx.store!, session, res) }) };
  }

  @Get()
  @Authenticated({ principals: USER_ONLY, permission: null })
  @ApiOperation({ summary: 'Your passkeys in this store, oldest first.' })
  @ApiResult(PasskeyListResponse)
  @ApiFailures(404) // WebAuthnNotConfigured
  async list(@Ctx() ctx: RequestContext) {
    const passkeys = await this.passkeys.list(ctx.session!);
    return { status: 'OK', passkeys: passkeys.map(toPasskeyResponse) };
  }

  @Patch(':id')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @ApiOperation({ summary: 'Rename one of your passkeys.' })
  @ApiResult(PasskeyAnswer)
  @ApiFailures(404) // PasskeyNotFound, WebAuthnNotConfigured
  async rename(@Ctx() ctx: RequestContext, @Param() params: PasskeyIdParam, @Body() input: RenamePasskeyInput) {
    const passkey = await this.passkeys.rename(ctx.session!, params.id, input.name);
    return { status: 'OK', passkey: toPasskeyResponse(passkey) };
  }

  @Delete(':id')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @ApiOperation({ summary: 'Delete one of your passkeys: it no longer signs in (the authenticator may still offer it).' })
  @ApiResult(PasskeyDeletedResponse)
  @ApiFailures(404) // PasskeyNotFound, WebAuthnNotConfigured
  async delete(@Ctx() ctx: RequestContext, @Param() params: PasskeyIdParam) {
    await this.passkeys.delete(ctx.session!, params.id, auditContextOf(ctx));
    return { status: 'OK', id: params.id };
  }

  // A pending sign-in's passkey factor (the login answered `sessionNeedsPasskey2FA`).
  @Post('2fa/options')
  @Authenticated({ principals: USER_ONLY, permission: null, during2FA: true })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Start the pending sign-in\'s passkey factor: the request options for `navigator.credentials.get()`, naming your passkeys. Its challenge serves once, for 5 minutes.' })
  @ApiResult(PasskeyRequestOptions)
  @ApiFailures(404, 409) // WebAuthnNotConfigured; SecondFactorNotPending
  secondFactorOptions(@Ctx() ctx: RequestContext) {
    return this.passkeys.secondFactorOptions(ctx.session!);
  }

  @Post('2fa/verify')
  @Authenticated({ principals: USER_ONLY, permission: null, during2FA: true })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Complete the pending sign-in with one of your passkeys: the session with fresh tokens (those of the pending sign-in finish it only), as every completed second factor answers.' })
  @ApiResult(SecondFactorDoneResponse)
  @ApiFailures(400, 404, 409) // PasskeyVerificationFailed, PasskeyChallengeExpired; PasskeyNotFound, WebAuthnNotConfigured; SecondFactorNotPending
  async secondFactor(@Ctx() ctx: RequestContext, @Body() input: PasskeyLoginInput, @Res({ passthrough: true }) res: Response) {
    const session = await this.passkeys.secondFactor(ctx.session!, input, auditContextOf(ctx));
    return this.secondFactorAnswer.send(ctx.store!, session, res);
  }

  @Post('login/options')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Start a passkey sign-in to the targeted store, without a username: the request options for `navigator.credentials.get()`. Its challenge serves once, for 5 minutes.' })
  @ApiResult(PasskeyRequestOptions)
  @ApiFailures(404, 429) // WebAuthnNotConfigured; the login rate limit per address
  loginOptions(@Req() req: ContextRequest) {
    return this.passkeys.loginOptions(req.ctx.store!, { ip: req.ip, userAgent: req.headers['user-agent'] });
  }

  // The same answer as POST /login; no second factor follows (the passkey verified the user).
  @Post('login/verify')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Finish a passkey sign-in: the session, its access token (and refresh token when they are on), cookies and a header, as `/login` answers. No second factor is asked after it.' })
  @ApiResult(LoginResponse)
  @ApiAccessTokenHeader()
  @ApiFailures(400, 403, 404) // PasskeyVerificationFailed, PasskeyChallengeExpired; UserInactive...; PasskeyNotFound, WebAuthnNotConfigured
  async loginVerify(@Req() req: ContextRequest, @Body() input: PasskeyLoginInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const result = await this.passkeys.login(store, input, { ip: req.ip, userAgent: req.headers['user-agent'] });
    this.cookies.send(res, store, result.tokens);
    return this.passkeys.toLoginResponse(result);
  }
}

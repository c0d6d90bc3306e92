import { createPublicKey } from 'node:crypto';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { CookieOptions, Response } from 'express';
import { AppError } from '../common/errors.js';
import { Authenticated, Public, USER_ONLY } from '../common/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import { SessionService } from '../session/session.service.js';
import { LoginInput, PublicKeyQuery, SessionIdParam, toSessionListItem, toSessionResponse, type SessionView } from './auth.dto.js';
import { AuthService } from './auth.service.js';
import { AuthenticationService } from './authentication.service.js';
import { KeyService } from './key.service.js';

@ApiBearerAuth()
@ApiTags('auth')
@Controller('auth-api')
export class AuthController {
  private readonly view: SessionView;

  constructor(
    private readonly auth: AuthService,
    private readonly authentication: AuthenticationService,
    private readonly sessions: SessionService,
    private readonly keys: KeyService,
    private readonly config: AppConfig,
  ) {
    this.view = { multipleRoles: config.settings.usersHaveMultipleRoles };
  }

  @Post('login')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Log in to the targeted store: the session, its access token, a cookie and a header.' })
  async login(@Req() req: ContextRequest, @Body() input: LoginInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const result = await this.auth.login(store, input, { ip: req.ip, userAgent: req.headers['user-agent'] });
    const name = this.authentication.tokenName(store);
    res.cookie(name, result.accessToken, { ...this.cookieOptions(), expires: result.expiresAt });
    res.setHeader(name, result.accessToken);
    return toSessionResponse(result.session, this.view, result.accessToken, result.userBucketToken);
  }

  @Post('logout')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'End the session of the token sent, if any, and clear the cookie. Always 200.' })
  async logout(@Req() req: ContextRequest, @Res({ passthrough: true }) res: Response) {
    const session = await this.authentication.tryAuthenticate(req);
    if (session) await this.sessions.end(session.storeId, { id: session.sessionId });
    res.clearCookie(this.authentication.tokenName(req.ctx.store!), this.cookieOptions());
    return { status: 'OK', message: session ? 'Logged out' : 'No session to end' };
  }

  @Get('currentuser')
  @Authenticated({ principals: USER_ONLY, noLoginShape: true })
  @ApiOperation({ summary: 'The session of the access token sent.' })
  currentUser(@Ctx() ctx: RequestContext) {
    return toSessionResponse(ctx.session!, this.view, ctx.accessToken!);
  }

  @Get('publickey')
  @Public()
  @ApiOperation({ summary: 'The PEM public key that verifies access tokens (the current one, or `keyId`).' })
  async publicKey(@Query() query: PublicKeyQuery) {
    const key = query.keyId ? await this.keys.verificationKey(query.keyId) : await this.keys.signingKey().then((k) => ({ kid: k.kid, publicKey: k.publicKey }));
    if (!key) throw new AppError('KeyNotFound', 'no valid key with this id');
    return { status: 'OK', keyId: key.kid, keyData: key.publicKey };
  }

  @Get('.well-known/jwks.json')
  @Public()
  @ApiOperation({ summary: 'Every key that still verifies tokens, as a JSON Web Key Set.' })
  async jwks() {
    const keys = await this.keys.verificationKeys();
    return { keys: keys.map((k) => ({ ...createPublicKey(k.publicKey).export({ format: 'jwk' }), kid: k.kid, alg: 'RS256', use: 'sig' })) };
  }

  @Get('sessions')
  @Authenticated({ principals: USER_ONLY })
  @ApiOperation({ summary: 'Your sessions; the current one is marked.' })
  async listSessions(@Ctx() ctx: RequestContext) {
    const session = ctx.session!;
    const rows = await this.sessions.list(session.storeId, session.userId);
    return { status: 'OK', sessions: rows.map((r) => toSessionListItem(r, session.sessionId)) };
  }

  @Delete('sessions/:id')
  @Authenticated({ principals: USER_ONLY })
  @ApiOperation({ summary: 'End one of your sessions.' })
  async endSession(@Ctx() ctx: RequestContext, @Param() params: SessionIdParam) {
    const session = ctx.session!;
    const ended = await this.sessions.end(session.storeId, { id: params.id, userId: session.userId });
    if (!ended) throw new AppError('SessionNotFound');
    return { status: 'OK', ended };
  }

  @Delete('sessions')
  @Authenticated({ principals: USER_ONLY })
  @ApiOperation({ summary: 'End all your sessions but this one.' })
  async endOtherSessions(@Ctx() ctx: RequestContext) {
    const session = ctx.session!;
    const ended = await this.sessions.end(session.storeId, { userId: session.userId, exceptId: session.sessionId });
    return { status: 'OK', ended };
  }

  private cookieOptions(): CookieOptions {
    const { COOKIE_SECURE, COOKIE_DOMAIN, NODE_ENV } = this.config.env;
    return { httpOnly: true, sameSite: 'lax', secure: COOKIE_SECURE ?? NODE_ENV === 'production', domain: COOKIE_DOMAIN, path: '/' };
  }
}

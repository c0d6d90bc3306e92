import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { AppError } from '../../kernel/errors.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, Public, USER_ONLY, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { SessionService } from '../session/session.service.js';
import { StoreService } from '../store/store.service.js';
import {
  JwksResponse,
  LoginInput,
  LoginResponse,
  LogoutResponse,
  PublicKeyQuery,
  PublicKeyResponse,
  SessionIdParam,
  SessionListResponse,
  SessionResponse,
  SessionsEndedResponse,
  toSessionListItem,
  toSessionResponse,
  type SessionView,
} from './auth.dto.js';
import { AuthService } from './auth.service.js';
import { AuthenticationService } from './authentication.service.js';
import { KeyService } from './key.service.js';

@ApiTags('auth')
@Controller('auth-api')
export class AuthController {
  private readonly view: SessionView;

  constructor(
    private readonly auth: AuthService,
    private readonly authentication: AuthenticationService,
    private readonly sessions: SessionService,
    private readonly keys: KeyService,
    private readonly stores: StoreService,
    private readonly config: AppConfig,
  ) {
    this.view = { multipleRoles: config.settings.usersHaveMultipleRoles };
  }

  @Post('login')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Log in to the targeted store: the session, its access token, a cookie and a header.' })
  @ApiResult(LoginResponse)
  @ApiFailures(401, 429) // 401 InvalidCredentials
  async login(@Req() req: ContextRequest, @Body() input: LoginInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const result = await this.auth.login(store, input, { ip: req.ip, userAgent: req.headers['user-agent'] });
    this.authentication.sendToken(res, store, result.accessToken, result.expiresAt);
    return this.auth.toResponse(result);
  }

  @Post('logout')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'End the session of the token sent, if any, and clear the cookie. Always 200.' })
  @ApiResult(LogoutResponse)
  async logout(@Req() req: ContextRequest, @Res({ passthrough: true }) res: Response) {
    const session = await this.authentication.tryAuthenticate(req);
    if (session) await this.sessions.end(session.storeId, { id: session.sessionId });
    // The cookie of the token's own store, whichever store the request named.
    const store = session && session.storeId !== req.ctx.store!.id ? ((await this.stores.findById(session.storeId)) ?? req.ctx.store!) : req.ctx.store!;
    this.authentication.clearToken(res, store);
    return { status: 'OK', message: session ? 'Logged out' : 'No session to end' };
  }

  @Get('currentuser')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null, noLoginShape: true, during2FA: true })
  @ApiOperation({ summary: 'The session of the access token (or API key) sent.' })
  @ApiResult(SessionResponse)
  currentUser(@Ctx() ctx: RequestContext) {
    return toSessionResponse(ctx.session!, this.view, ctx.accessToken);
  }

  @Get('publickey')
  @Public()
  @ApiOperation({ summary: 'The PEM public key that verifies access tokens (the current one, or `keyId`).' })
  @ApiResult(PublicKeyResponse)
  async publicKey(@Query() query: PublicKeyQuery) {
    const key = query.keyId ? await this.keys.verificationKey(query.keyId) : await this.keys.signingKey().then((k) => ({ kid: k.kid, publicKey: k.publicKey }));
    if (!key) throw new AppError('KeyNotFound', 'no valid key with this id');
    return { status: 'OK', keyId: key.kid, keyData: key.publicKey };
  }

  @Get('.well-known/jwks.json')
  @Public()
  @ApiOperation({ summary: 'Every key that still verifies tokens, as a JSON Web Key Set.' })
  @ApiResult(JwksResponse)
  async jwks() {
    const keys = await this.keys.verificationKeys();
    return { keys: keys.map((k) => ({ ...k.publicKeyObject.export({ format: 'jwk' }), kid: k.kid, alg: 'RS256', use: 'sig' })) };
  }

  @Get('sessions')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @ApiOperation({ summary: 'Your live sessions, newest first, paged; the current one is marked.' })
  @ApiResult(SessionListResponse)
  async listSessions(@Ctx() ctx: RequestContext, @Query() query: PageQuery) {
    const session = ctx.session!;
    const [rows, total, page] = await this.sessions.list(session.storeId, session.userId, query);
    return { status: 'OK', sessions: rows.map((r) => toSessionListItem(r, session.sessionId)), paging: paging(page, total) };
  }

  @Delete('sessions/:id')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @ApiOperation({ summary: 'End one of your sessions (a key: one of its creator\'s logins).' })
  @ApiResult(SessionsEndedResponse)
  async endSession(@Ctx() ctx: RequestContext, @Param() params: SessionIdParam) {
    const session = ctx.session!;
    const ended = await this.sessions.end(session.storeId, { id: params.id, userId: session.userId });
    if (!ended) throw new AppError('SessionNotFound');
    return { status: 'OK', ended };
  }

  @Delete('sessions')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @ApiOperation({ summary: 'End all your sessions but this one (a key: all its creator\'s logins; the key stays).' })
  @ApiResult(SessionsEndedResponse)
  async endOtherSessions(@Ctx() ctx: RequestContext) {
    const session = ctx.session!;
    // A key is no login: its id is not a session to keep, and the key itself is not ended here.
    const exceptId = session.principal === 'apiKey' ? undefined : session.sessionId;
    const ended = await this.sessions.end(session.storeId, { userId: session.userId, exceptId });
    return { status: 'OK', ended };
  }
}

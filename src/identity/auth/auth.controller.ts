import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAccessTokenHeader, ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { AuditLog, auditActor, auditContext } from '../../kernel/audit.js';
import { AppError } from '../../kernel/errors.js';
import { Authenticated, Public, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { SessionService } from '../session/session.service.js';
import { StoreService } from '../store/store.service.js';
import {
  JwksResponse,
  LoginInput,
  LoginResponse,
  LogoutInput,
  LogoutResponse,
  PublicKeyQuery,
  PublicKeyResponse,
  SessionResponse,
  toSessionResponse,
  type SessionView,
} from './auth.dto.js';
import { KeyService } from '../signing-key/key.service.js';
import { RefreshTokenService } from '../token/refresh-token.service.js';
import { TokenCookies } from '../token/token-cookies.js';
import { AuthService } from './auth.service.js';
import { explainRootFallback } from './root-fallback.js';
import { CallerResolver } from './caller-resolver.js';
import { TenancySection } from '../../kernel/tenancy.settings.js';

@ApiTags('auth')
@Controller('auth-api')
export class AuthController {
  private readonly view: SessionView;

  constructor(
    private readonly auth: AuthService,
    private readonly callers: CallerResolver,
    private readonly sessions: SessionService,
    private readonly keys: KeyService,
    private readonly stores: StoreService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly cookies: TokenCookies,
    private readonly audit: AuditLog,
    private readonly config: AppConfig,
  ) {
    this.view = { multipleRoles: config.section(TenancySection).usersHaveMultipleRoles };

  }

  @Post('login')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Log in to the targeted store: the session, its access token (and refresh token when they are on), cookies and a header.' })
  @ApiResult(LoginResponse)
  @ApiAccessTokenHeader()
  @ApiFailures(401, 429) // 401 InvalidCredentials
  async login(@Req() req: ContextRequest, @Body() input: LoginInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const result = await this.auth.login(store, input, { ip: req.ip, userAgent: req.headers['user-agent'] }, auditContext(req)).catch(explainRootFallback(req, this.config));
    this.cookies.send(res, store, result.tokens);
    return this.auth.toResponse(result);
  }

  @Post('logout')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'End the session of the access token sent (or of the refresh token in the body), if any, and clear the cookies. Always 200.' })
  @ApiResult(LogoutResponse)
  // No body at all is the usual logout.
  @ApiBody({ type: LogoutInput, required: false })
  async logout(@Req() req: ContextRequest, @Body() input: LogoutInput, @Res({ passthrough: true }) res: Response) {
    // An expired access token cannot end its session; the refresh token still names it.
    const session =
      (await this.callers.tryLogin(req, req.ctx.store!))?.session ?? (input?.refreshToken ? await this.refreshTokens.sessionOf(req.ctx.store!, input.refreshToken) : undefined);
    if (session) {
      await this.sessions.end(session.storeId, { id: session.sessionId }, (_count, tx) =>
        this.audit.record({ storeId: session.storeId, action: 'user.logout', outcome: 'success', actor: auditActor(session), target: { type: 'session', id: session.sessionId } }, auditContext(req, session.sessionId), tx),
      );
    }
    // The cookie of the token's own store, whichever store the request named.
    const store = session && session.storeId !== req.ctx.store!.id ? ((await this.stores.findById(session.storeId)) ?? req.ctx.store!) : req.ctx.store!;
    this.cookies.clear(res, store);
    return { status: 'OK', message: session ? 'Logged out' : 'No session to end' };
  }

  @Get('currentuser')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null, noLoginShape: true, during2FA: true })
  @ApiOperation({ summary: 'The session of the access token (or API key) sent.' })
  @ApiResult(SessionResponse)
  // The request, not @Ctx(): the global validation pipe runs on a custom decorator's value (a
  // promise and a pass through the pipe on the busiest route), never on the request itself.
  currentUser(@Req() { ctx }: ContextRequest) {
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
}

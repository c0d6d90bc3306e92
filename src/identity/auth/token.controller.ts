import { Body, Controller, Get, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAccessTokenHeader, ApiFailures, ApiResult } from '../../kernel/api-result.js';
import { auditContext } from '../../kernel/audit.js';
import { Authenticated, Public } from '../../kernel/policy.js';
import { principalOf, type ContextRequest } from '../../kernel/request-context.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { LoginTokenService } from '../token/login-tokens.service.js';
import { RefreshTokenService } from '../token/refresh-token.service.js';
import { TokenCookies } from '../token/token-cookies.js';
import { cookieValue } from '../token/token-extractor.js';
import { TokenVerifierService } from '../token/token-verifier.service.js';
import { IntrospectInput, IntrospectionResponse, OpenIdConfiguration, RefreshInput, RefreshResponse } from './auth.dto.js';
import { IntrospectionService } from './introspection.service.js';
import { explainRootFallback } from './root-fallback.js';

// Introspection takes an HTML form too (RFC 7662), as well as JSON.
export const INTROSPECTION_ROUTE = '/auth-api/introspect';

// The token lifecycle beyond login: refresh, the discovery document offline verifiers start
// from, and introspection for backend services.
@ApiTags('auth')
@Controller('auth-api')
export class TokenController {
  constructor(
    private readonly loginTokens: LoginTokenService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly cookies: TokenCookies,
    private readonly tokens: TokenVerifierService,
    private readonly introspection: IntrospectionService,
    private readonly config: AppConfig,
  ) {}

  @Post('refresh')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Exchange a refresh token (body, or the refresh cookie of the targeted store) for a new access token and a new refresh token; the one sent is spent. A spent one sent again ends its session (401 RefreshTokenReused), except within refreshReuseGraceSeconds, when it answers the same new pair.',
  })
  @ApiResult(RefreshResponse)
  @ApiAccessTokenHeader()
  // Without a body, the refresh cookie is used.
  @ApiBody({ type: RefreshInput, required: false })
  @ApiFailures(401, 429) // RefreshTokenInvalid, RefreshTokenReused
  async refresh(@Req() req: ContextRequest, @Body() input: RefreshInput, @Res({ passthrough: true }) res: Response) {
    const store = req.ctx.store!;
    const token = input?.refreshToken ?? cookieValue(req, this.cookies.refreshName(store));
    const { session, tokens } = await this.refreshTokens.rotate(store, token, req.ip, auditContext(req)).catch(explainRootFallback(req, this.config));
    this.cookies.send(res, store, tokens);
    return this.loginTokens.answer(session, tokens);
  }

  @Get('.well-known/openid-configuration')
  @Public()
  @ApiOperation({ summary: 'The discovery document: the issuer of access tokens and where their keys are (`jwks_uri`), for offline verifiers.' })
  @ApiResult(OpenIdConfiguration)
  discovery(@Req() req: ContextRequest) {
    // Never from the Host header, which the caller writes: PUBLIC_URL (required in production),
    // else the address this connection reached.
    const base = this.config.env.PUBLIC_URL ? this.config.publicUrl('') : listeningAddress(req);
    return {
      issuer: this.tokens.issuer,
      jwks_uri: `${base}/auth-api/.well-known/jwks.json`,
      introspection_endpoint: `${base}${INTROSPECTION_ROUTE}`,
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
      response_types_supported: [],
      claims_supported: ['iss', 'sub', 'aud', 'sid', 'jti', 'iat', 'exp', 'acr', 'amr', 'auth_time', 'sessionId', 'userId', 'storeId'],
      acr_values_supported: ['aal1', 'aal2', 'pending'],
    };
  }

  @Post('introspect')
  @Authenticated({ principals: { user: false, apiKey: true, machine: true }, roles: ADMIN_ROLES, permission: null })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'RFC 7662 introspection, for a calling service (machine token) or an administrator\'s API key: whether an access token, API key or refresh token is live, and whose it is. `{ active: false }` for anything else.',
  })
  @ApiResult(IntrospectionResponse)
  introspect(@Req() req: ContextRequest, @Body() input: IntrospectInput) {
    return this.introspection.introspect(principalOf(req.ctx), input.token, input.token_type_hint);
  }
}

// The service's own address as this connection reached it (the local end of the socket).
function listeningAddress(req: ContextRequest): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return `${req.protocol}://${host}:${req.socket.localPort}`;
}

import { Controller, Delete, Get, Param, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { auditActor, auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { PageQuery, paging } from '../../kernel/paging.js';
import { Authenticated, USER_ONLY, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { ADMIN_ROLES } from '../../kernel/roles.js';
import { P } from '../../kernel/service-permissions.js';
import { OAuthConsentDeletedResponse, OAuthConsentIdParam, OAuthConsentResponse, OAuthConsentUserParam, UserOAuthConsentParams } from './oidc-consent.dto.js';
import { OidcConsentService } from './oidc-consent.service.js';

// Remembered consents of the OpenID Connect provider (docs/oidc.md#consents): the caller's own,
// and a user's for the store's administrators.
@ApiTags('oauth consents')
@Controller('auth-api')
export class OidcConsentController {
  constructor(private readonly consents: OidcConsentService) {}

  @Get('oauth/consents')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @Envelope({ dataName: 'consents', action: 'list' })
  @ApiOperation({ summary: 'The applications you allowed (remembered consents of the store\'s OpenID Connect provider), newest first, paged.' })
  @ApiResult([OAuthConsentResponse])
  async listOwn(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const session = ctx.session!;
    const [rows, total, page] = await this.consents.list(session.storeId, session.userId, query);
    return { data: rows, paging: paging(page, total) };
  }

  @Delete('oauth/consents/:id')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @Envelope({ dataName: 'consent', action: 'delete' })
  @ApiOperation({ summary: 'Revoke one of your consents: the application\'s tokens stop at once and its next sign-in asks again.' })
  @ApiResult(OAuthConsentDeletedResponse)
  async revokeOwn(@Req() req: ContextRequest, @Param() params: OAuthConsentIdParam): Promise<Enveloped<unknown>> {
    const session = req.ctx.session!;
    await this.consents.revoke(session.storeId, session.userId, params.id, auditActor(session), auditContext(req));
    return { data: { id: params.id } };
  }
}

// A user's consents, for the store's administrators who outrank it (as its sessions).
@ApiTags('users')
@Controller('auth-api/v1/users')
export class UserOidcConsentController {
  constructor(private readonly consents: OidcConsentService) {}

  @Get(':id/oauthconsents')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersRead })
  @Envelope({ dataName: 'consents', action: 'list' })
  @ApiOperation({ summary: "A user's remembered consents of the store's OpenID Connect provider, newest first, paged." })
  @ApiResult([OAuthConsentResponse])
  async listForUser(@Ctx() ctx: RequestContext, @Param() params: OAuthConsentUserParam, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const [rows, total, page] = await this.consents.listFor(ctx.session!, ctx.store!, params.id, query);
    return { data: rows, paging: paging(page, total) };
  }

  @Delete(':id/oauthconsents/:consentId')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: P.usersUpdate })
  @Envelope({ dataName: 'consent', action: 'delete' })
  @ApiOperation({ summary: "Revoke a user's consent: the application's tokens for it stop at once." })
  @ApiResult(OAuthConsentDeletedResponse)
  async revokeForUser(@Req() req: ContextRequest, @Param() params: UserOAuthConsentParams): Promise<Enveloped<unknown>> {
    const { ctx } = req;
    await this.consents.revokeFor(ctx.session!, ctx.store!, params.id, params.consentId, auditContext(req));
    return { data: { id: params.consentId } };
  }
}

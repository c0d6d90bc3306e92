import { Body, Controller, HttpCode, HttpStatus, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AntiBotProtected } from '../antibot/antibot.guard.js';
import { ApiResult } from '../../kernel/api-result.js';
import { auditContext } from '../../kernel/audit.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { Public } from '../../kernel/policy.js';
import { Ctx, type ContextRequest, type RequestContext } from '../../kernel/request-context.js';
import { RateLimitedOutcomesPerIp } from '../../kernel/rate-limit/rate-limit.js';
import { StoreResponse, toStoreResponse } from '../store/index.js';
import { MultiTenantOnly } from '../tenancy/multi-tenant-only.guard.js';
import { UserResponse } from '../user/index.js';
import { UserService } from '../user/user.service.js';
import { VerificationGate } from '../verification/verification.gate.js';
import { RegisterStoreOwnerInput, RegisterStoreUserInput } from './registration.dto.js';
import { RegistrationService } from './registration.service.js';

@ApiTags('registration')
@Controller('auth-api/v1')
export class RegistrationController {
  constructor(
    private readonly registration: RegistrationService,
    private readonly users: UserService,
    private readonly verification: VerificationGate,
  ) {}

  @Post('registerstoreowner')
  @Public()
  @RateLimitedOutcomesPerIp({ success: 'registration', failure: 'registrationFailures' })
  @AntiBotProtected()
  @MultiTenantOnly()
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'user', action: 'create' })
  @ApiOperation({ summary: 'Register a new store and its owner (root level only; not in a single-tenant deployment).' })
  @ApiResult(UserResponse, { store: StoreResponse })
  async registerStoreOwner(@Ctx() ctx: RequestContext, @Req() req: ContextRequest, @Body() input: RegisterStoreOwnerInput): Promise<Enveloped<unknown>> {
    const { user, store } = await this.registration.registerStoreOwner(ctx.store!, input, ctx.origin, auditContext(req));
    return { data: this.users.toResponse(user), extra: { store: toStoreResponse(store), ...this.verification.registrationFlags(user) } };
  }

  @Post('registerstoreuser')
  @Public()
  @RateLimitedOutcomesPerIp({ success: 'registration', failure: 'registrationFailures' })
  @AntiBotProtected()
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'user', action: 'create' })
  @ApiOperation({ summary: 'Register a user in the targeted store (a single-tenant deployment: in its organisation, role user).' })
  @ApiResult(UserResponse)
  async registerStoreUser(@Req() req: ContextRequest, @Body() input: RegisterStoreUserInput): Promise<Enveloped<unknown>> {
    const { ctx } = req;
    const user = await this.registration.registerStoreUser(ctx.store!, input, ctx.origin, auditContext(req));
    // emailVerificationNeeded / mobileVerificationNeeded: the client starts those flows next.
    return { data: this.users.toResponse(user), extra: { ...this.verification.registrationFlags(user) } };
  }
}

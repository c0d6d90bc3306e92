import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Envelope, type Enveloped } from '../common/envelope.js';
import { Public } from '../common/policy.js';
import { Ctx, type RequestContext } from '../common/request-context.js';
import { RateLimitedPerIp } from '../rate-limit/rate-limit.js';
import { toStoreResponse } from '../store/store.dto.js';
import { UserService } from '../user/user.service.js';
import { RegisterStoreOwnerInput, RegisterStoreUserInput } from './registration.dto.js';
import { RegistrationService } from './registration.service.js';

@ApiTags('registration')
@Controller('auth-api/v1')
export class RegistrationController {
  constructor(
    private readonly registration: RegistrationService,
    private readonly users: UserService,
  ) {}

  @Post('registerstoreowner')
  @Public()
  @RateLimitedPerIp('registration')
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'user', action: 'create' })
  @ApiOperation({ summary: 'Register a new store and its owner (root level only).' })
  async registerStoreOwner(@Ctx() ctx: RequestContext, @Body() input: RegisterStoreOwnerInput): Promise<Enveloped<unknown>> {
    const { user, store } = await this.registration.registerStoreOwner(ctx.store!, input);
    return { data: this.users.toResponse(user), extra: { store: toStoreResponse(store) } };
  }

  @Post('registerstoreuser')
  @Public()
  @RateLimitedPerIp('registration')
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'user', action: 'create' })
  @ApiOperation({ summary: 'Register a user in the targeted store.' })
  async registerStoreUser(@Ctx() ctx: RequestContext, @Body() input: RegisterStoreUserInput): Promise<Enveloped<unknown>> {
    const user = await this.registration.registerStoreUser(ctx.store!, input);
    return { data: this.users.toResponse(user) };
  }
}

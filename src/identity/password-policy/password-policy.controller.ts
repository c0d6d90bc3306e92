import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { Public } from '../../kernel/policy.js';
import { PasswordPolicyResponse, toPasswordPolicyResponse } from './password-policy.dto.js';
import { PasswordPolicyService } from './password-policy.service.js';

@ApiTags('password policy')
@Controller('auth-api')
export class PasswordPolicyController {
  constructor(private readonly policy: PasswordPolicyService) {}

  @Get('password-policy')
  @Public()
  @Envelope({ dataName: 'passwordPolicy', action: 'get' })
  @ApiOperation({ summary: 'The rules a new password must meet in the targeted store, for a sign-up or password form.' })
  @ApiResult(PasswordPolicyResponse)
  rules(): Enveloped<PasswordPolicyResponse> {
    return { data: toPasswordPolicyResponse(this.policy.rules()) };
  }
}

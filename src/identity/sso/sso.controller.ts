import { Controller, Get, HttpStatus, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiRedirect } from '../../kernel/api-result.js';
import { Public } from '../../kernel/policy.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { SsoLoginQuery } from './sso.dto.js';
import { SsoService, type SsoRequest } from './sso.service.js';

@ApiTags('single sign-on')
@Controller('auth-api/sso')
export class SsoController {
  constructor(private readonly sso: SsoService) {}

  @Get('login')
  @Public()
  @ApiOperation({ summary: 'Start single sign-on for the targeted store (redirects to the provider).' })
  @ApiRedirect('to the provider')
  async login(@Req() req: ContextRequest, @Query() query: SsoLoginQuery, @Res() res: Response): Promise<void> {
    res.redirect(HttpStatus.FOUND, await this.sso.start(req.ctx.store!, query.redirectUrl, at(req)));
  }

  @Get('callback')
  @Public()
  @ApiOperation({ summary: "The provider's return: redirects to the client with `provider` and `socialCode`, or `error`." })
  @ApiRedirect('to the client, with `provider` and `socialCode`, or `error`')
  async callback(@Req() req: ContextRequest, @Res() res: Response): Promise<void> {
    res.redirect(HttpStatus.FOUND, await this.sso.callback(req.originalUrl, at(req)));
  }
}

function at(req: ContextRequest): SsoRequest {
  return { origin: `${req.protocol}://${req.get('host')}`, requestId: req.ctx.requestId };
}

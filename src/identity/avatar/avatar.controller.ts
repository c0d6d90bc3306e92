import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AppError } from '../../kernel/errors.js';
import { Public } from '../../kernel/policy.js';
import { AVATAR_SEED } from './avatar.service.js';
import { identiconSvg } from './identicon.js';

@ApiTags('avatars')
@Controller('auth-api/avatars')
export class AvatarController {
  @Get(':file')
  @Public()
  @ApiOperation({ summary: 'A generated avatar (SVG), the default for users and stores that send none.' })
  @ApiOkResponse({ description: 'The SVG image.', content: { 'image/svg+xml': { schema: { type: 'string' } } } })
  get(@Param('file') file: string, @Res({ passthrough: true }) res: Response): string {
    const seed = file.endsWith('.svg') ? file.slice(0, -4) : '';
    if (!AVATAR_SEED.test(seed)) throw new AppError('NotFound', 'no such avatar');
    // Set here, not with @Header: Nest applies those before the handler runs, so an error
    // would leave as a JSON body labelled image/svg+xml and cached for a year.
    res.set({
      'Content-Type': 'image/svg+xml',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
    return identiconSvg(seed);
  }
}

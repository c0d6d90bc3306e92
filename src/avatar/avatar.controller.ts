import { Controller, Get, Header, Param } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { Public } from '../common/policy.js';
import { AVATAR_SEED } from './avatar.service.js';
import { identiconSvg } from './identicon.js';

@ApiTags('avatars')
@Controller('auth-api/avatars')
export class AvatarController {
  @Get(':file')
  @Public()
  @ApiOperation({ summary: 'A generated avatar (SVG), the default for users and stores that send none.' })
  @ApiProduces('image/svg+xml')
  @Header('Content-Type', 'image/svg+xml')
  @Header('Cache-Control', 'public, max-age=31536000, immutable')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
  get(@Param('file') file: string): string {
    const seed = file.endsWith('.svg') ? file.slice(0, -4) : '';
    if (!AVATAR_SEED.test(seed)) throw new AppError('NotFound', 'no such avatar');
    return identiconSvg(seed);
  }
}

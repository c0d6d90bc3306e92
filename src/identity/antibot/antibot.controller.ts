import { Controller, Get, Header } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import { Public } from '../../kernel/policy.js';
import { AltchaChallengeResponse } from './antibot.dto.js';
import { AntiBotService } from './antibot.service.js';

@ApiTags('anti-bot')
@Controller('auth-api')
export class AntiBotController {
  constructor(private readonly antiBot: AntiBotService) {}

  @Get('challenge')
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'A fresh ALTCHA proof-of-work challenge (settings antiBot.provider = altcha; 404 otherwise).' })
  @ApiResult(AltchaChallengeResponse)
  challenge() {
    return this.antiBot.challenge();
  }
}

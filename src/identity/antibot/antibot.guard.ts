import { applyDecorators, Injectable, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiFailures } from '../../kernel/api-result.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AntiBotService, CHALLENGE_HEADER } from './antibot.service.js';

@Injectable()
export class AntiBotGuard implements CanActivate {
  constructor(private readonly antiBot: AntiBotService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ContextRequest>();
    const header = req.headers[CHALLENGE_HEADER];
    await this.antiBot.verify(typeof header === 'string' ? header : undefined, req.ip, req.ctx?.requestId);
    return true;
  }
}

// Puts the anti-bot challenge (settings antiBot) in front of a public route: public
// registrations, verification and password-reset starts. Runs after the route policy.
export const AntiBotProtected = () =>
  applyDecorators(
    UseGuards(AntiBotGuard),
    ApiFailures(403, 503),
    ApiHeader({ name: CHALLENGE_HEADER, required: false, description: 'The anti-bot solution (ALTCHA payload, or hCaptcha / Turnstile / reCAPTCHA token) when settings antiBot.provider is not none.' }),
  );

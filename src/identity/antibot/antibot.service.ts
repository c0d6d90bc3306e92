import { randomBytes } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1';
import { LRUCache } from 'lru-cache';
import { PinoLogger } from 'nestjs-pino';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import type { AntiBotProvider } from './antibot.settings.js';
import { InjectRedis, type OptionalRedis } from '../../platform/redis/redis.module.js';
import { CHALLENGE_FAILED } from './antibot.errors.js';
import { AntiBotSection } from './antibot.settings.js';

// Where clients put the solution (ALTCHA payload) or the provider's token.
export const CHALLENGE_HEADER = 'x-challenge-response';

const VERIFY_URLS: Record<Exclude<AntiBotProvider, 'none' | 'altcha'>, string> = {
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
};
const VERIFY_TIMEOUT_MS = 5000;

export interface AltchaChallenge {
  algorithm: string;
  challenge: string;
  maxnumber?: number;
  salt: string;
  signature: string;
}

// Checks the anti-bot challenge of a request. Off (`none`) by default.
@Injectable()
export class AntiBotService implements OnModuleInit {
  private secret = '';
  // Solved ALTCHA challenges, refused a second time until they expire (in Redis across replicas).
  private readonly spent = new LRUCache<string, true>({ max: 100_000, ttlAutopurge: true });

  constructor(
    private readonly config: AppConfig,
    @InjectRedis() private readonly redis: OptionalRedis,
    private readonly logger: PinoLogger,
    private readonly checks: BootChecks,
  ) {
    logger.setContext(AntiBotService.name);
  }

  get provider(): AntiBotProvider {
    return this.config.section(AntiBotSection).antiBot.provider;
  }

  onModuleInit(): void {
    const { provider, secret } = this.config.section(AntiBotSection).antiBot;
    if (provider === 'none') return;
    const value = typeof secret === 'string' ? secret : secret ? this.config.secretFromEnv(secret.env) : undefined;
    if (value) this.secret = value;
    else if (provider === 'altcha' && ['development', 'test'].includes(this.config.env.NODE_ENV)) {
      // One process only: replicas would not verify each other's challenges.
      this.secret = randomBytes(32).toString('hex');
      this.logger.warn('settings.antiBot.secret is not set: ALTCHA challenges are signed with a key of this process only');
    } else this.checks.report([`settings.antiBot.secret: required for provider ${provider}`]);
  }

  // A fresh ALTCHA challenge for the widget; 404 unless ALTCHA is the provider.
  async challenge(): Promise<AltchaChallenge> {
    if (this.provider !== 'altcha') throw new AppError('RouteNotFound', 'the ALTCHA challenge is not enabled (settings antiBot.provider)');
    const { altchaMaxNumber, altchaExpireSeconds } = this.config.section(AntiBotSection).antiBot;
    return createChallenge({ hmacKey: this.secret, maxNumber: altchaMaxNumber, expires: new Date(Date.now() + altchaExpireSeconds * 1000) });
  }

  // Passes, or 403 ChallengeFailed; 503 when the provider cannot be asked (logged with `requestId`).
  async verify(response: string | undefined, remoteIp: string | undefined, requestId?: string): Promise<void> {
    if (this.provider === 'none') return;
    if (!response) throw new AppError(CHALLENGE_FAILED, `solve the anti-bot challenge and send it in the ${CHALLENGE_HEADER} header`);
    const ok = this.provider === 'altcha' ? await this.verifyAltcha(response) : await this.verifyToken(this.provider, response, remoteIp, requestId);
    if (!ok) throw new AppError(CHALLENGE_FAILED, 'the anti-bot challenge solution is wrong, expired or already used');
  }

  private async verifyAltcha(payload: string): Promise<boolean> {
    let valid = false;
    try {
      valid = await verifySolution(payload, this.secret, true);
    } catch {
      return false; // not base64 JSON of a payload
    }
    if (!valid) return false;
    let parsed: { signature?: string };
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as { signature?: string };
    } catch {
      return false;
    }
    const expires = Number(extractParams(payload).expires ?? 0) * 1000;
    return this.spendOnce(`altcha:${parsed.signature}`, Math.max(1000, expires - Date.now()));
  }

  // True the first time a key is seen until `ttlMs` passes.
  private async spendOnce(key: string, ttlMs: number): Promise<boolean> {
    if (this.redis) {
      const { PROJECT_CODENAME, SERVICE_CODENAME } = this.config.env;
      return (await this.redis.set(`${PROJECT_CODENAME}:${SERVICE_CODENAME}:antibot:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
    }
    if (this.spent.has(key)) return false;
    this.spent.set(key, true, { ttl: ttlMs });
    return true;
  }

  // hCaptcha, Turnstile and reCAPTCHA share the protocol: a form POST, `{ success }` back.
  private async verifyToken(provider: keyof typeof VERIFY_URLS, token: string, remoteIp: string | undefined, requestId: string | undefined): Promise<boolean> {
    const url = this.config.section(AntiBotSection).antiBot.verifyUrl ?? VERIFY_URLS[provider];
    const form = new URLSearchParams({ secret: this.secret, response: token });
    if (remoteIp) form.set('remoteip', remoteIp);
    let body: { success?: unknown };
    try {
      const res = await fetch(url, { method: 'POST', body: form, signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`status ${res.status}`);
      body = (await res.json()) as { success?: unknown };
    } catch (err) {
      this.logger.error({ err, provider, requestId }, 'anti-bot verification unavailable');
      throw new AppError('ServiceUnavailable', 'the anti-bot check is unavailable; try again later');
    }
    return body.success === true;
  }
}

import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { RateLimits } from '../rate-limit/rate-limit.js';
import { SessionService } from '../session/session.service.js';
import type { SessionData, SessionMeta } from '../session/session.types.js';
import type { StoreEntity } from '../store/store.entity.js';
import { PasswordHasher } from '../user/password.js';
import { UserService } from '../user/user.service.js';
import type { LoginInput } from './auth.dto.js';
import { TokenService } from './token.service.js';

export interface LoginResult {
  session: SessionData;
  accessToken: string;
  userBucketToken: string;
  expiresAt: Date;
}

@Injectable()
export class AuthService {
  // Compared against when the user does not exist, so both answers take a bcrypt's time.
  private dummyHash?: Promise<string>;

  constructor(
    private readonly users: UserService,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly limits: RateLimits,
    private readonly config: AppConfig,
  ) {}

  async login(store: StoreEntity, input: LoginInput, meta: SessionMeta): Promise<LoginResult> {
    const username = input.username ?? input.email;
    if (!username || !input.password) throw new AppError('MissingParameters', 'username and password are required');
    if (!store.isActive) throw new AppError('StoreInactive', `store "${store.codename}" is not active`);

    await this.limits.consume('loginPerIp', meta.ip ?? 'unknown');
    // Per user however the username is written: "+1 415 555 2671" and "+14155552671" are one counter.
    const attemptsKey = `${store.id}:${this.users.loginIdentifier(username)?.value ?? username.trim().toLowerCase()}`;
    await this.limits.assertOpen('loginPerUsername', attemptsKey);

    const user = await this.users.findByLoginIdentifier(store.id, username);
    this.dummyHash ??= bcrypt.hash(randomBytes(16).toString('hex'), this.config.env.BCRYPT_COST);
    const valid = await this.passwords.verify(input.password, user?.passwordHash ?? (await this.dummyHash));
    if (!user || !valid) {
      await this.limits.penalize('loginPerUsername', attemptsKey);
      throw new AppError('InvalidCredentials', 'invalid username or password');
    }
    // Only after the password: these answers tell the account exists.
    if (!user.isActive) throw new AppError('UserInactive', 'this account is deactivated');
    const s = this.config.settings;
    if (s.emailVerificationRequiredForLogin && user.email && !user.emailVerified) throw new AppError('EmailVerificationNeeded');
    if (s.mobileVerificationRequiredForLogin && user.mobile && !user.mobileVerified) throw new AppError('MobileVerificationNeeded');
    await this.limits.reset('loginPerUsername', attemptsKey);

    const session = await this.sessions.create(user, meta);
    const expiresAt = new Date(session.expiresAt);
    const claims = { sessionId: session.sessionId, userId: user.id, storeId: store.id };
    const [accessToken, userBucketToken] = await Promise.all([
      this.tokens.issue({ ...claims, use: 'access' }, expiresAt),
      this.tokens.issue({ ...claims, use: 'bucket' }, expiresAt),
    ]);
    return { session, accessToken, userBucketToken, expiresAt };
  }
}

import { Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';

export const PASSWORD_MIN_CHARS = 8;
// bcrypt reads at most 72 bytes; longer input is refused rather than silently truncated.
export const PASSWORD_MAX_BYTES = 72;

export function checkPasswordPolicy(password: string): void {
  if ([...password].length < PASSWORD_MIN_CHARS) {
    throw new AppError('WeakPassword', `password must be at least ${PASSWORD_MIN_CHARS} characters`);
  }
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
    throw new AppError('WeakPassword', `password must be at most ${PASSWORD_MAX_BYTES} bytes`);
  }
}

@Injectable()
export class PasswordHasher {
  constructor(private readonly config: AppConfig) {}

  async hash(password: string): Promise<string> {
    checkPasswordPolicy(password);
    return bcrypt.hash(password, this.config.env.BCRYPT_COST);
  }

  verify(password: string, hash: string): Promise<boolean> {
    return bcrypt.compare(password, hash);
  }
}

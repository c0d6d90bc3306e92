import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

export const AVATAR_SEED = /^[a-f0-9]{32}$/;

@Injectable()
export class AvatarService {
  constructor(private readonly config: AppConfig) {}

  // A new random avatar, served by AvatarController.
  generate(): string {
    return this.config.publicUrl(`/auth-api/avatars/${randomBytes(16).toString('hex')}.svg`);
  }
}

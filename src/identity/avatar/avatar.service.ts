import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../platform/config/app-config.js';
import { serviceUrl } from '../../platform/config/service-url.js';

export const AVATAR_SEED = /^[a-f0-9]{32}$/;

@Injectable()
export class AvatarService {
  constructor(private readonly config: AppConfig) {}

  // A new random avatar, served by AvatarController. The link is absolute, so a client on another
  // origin can show it: from PUBLIC_URL, else `origin` (the address the request being handled was
  // sent to: RequestContext.origin), else (at boot: the sample store, the super admin) the
  // address the service listens on.
  generate(origin?: string): string {
    const path = `/auth-api/avatars/${randomBytes(16).toString('hex')}.svg`;
    return this.config.env.PUBLIC_URL ? this.config.publicUrl(path) : (origin ?? serviceUrl(this.config.env)) + path;
  }
}

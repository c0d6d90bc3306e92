import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { Clock } from '../../platform/clock/clock.js';
import type { SessionData } from '../../kernel/principal.js';
import { UserService } from '../user/user.service.js';
import { AvatarStorage, type StoredObject } from './avatar-storage.js';
import { BucketRepository } from './bucket.repository.js';
import { BucketSection } from './bucket.settings.js';

// Recognised by content (magic bytes), never by file name or the client's declared type.
export const AVATAR_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
export const ACCESS_KEY = /^[a-f0-9]{40}$/;
const DOWNLOAD_PATH = '/auth-api/bucket/userAvatars/download/key/';

@Injectable()
export class BucketService {
  constructor(
    private readonly storage: AvatarStorage,
    private readonly uploads: BucketRepository,
    private readonly users: UserService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  // Stores the image and records it as the caller's. Beyond `avatarUploadsPerUser` files, the
  // caller's oldest files go, except the one that is its avatar now. `requestOrigin` makes the
  // link absolute when PUBLIC_URL is not set.
  async uploadAvatar(actor: SessionData, data: Buffer | undefined, requestOrigin: string): Promise<{ accessKey: string; url: string }> {
    if (!data?.length) throw new AppError('FileRequired', 'send the image as multipart field "file"');
    // Loaded at the first upload: ~2 MB that an instance nobody uploads to never needs.
    const { fileTypeFromBuffer } = await import('file-type');
    const type = await fileTypeFromBuffer(data);
    if (!type || !AVATAR_TYPES.has(type.mime)) throw new AppError('UnsupportedMediaType', 'avatars must be PNG, JPEG, WebP or GIF images');
    const accessKey = randomBytes(20).toString('hex');
    await this.storage.put(accessKey, { data, contentType: type.mime });
    await this.uploads.insert(actor.storeId, { accessKey, userId: actor.userId, createdAt: this.clock.now() });

    const current = accessKeyOf((await this.users.findById(actor.storeId, actor.userId))?.avatar);
    const beyond = await this.uploads.keysBeyond(actor.storeId, actor.userId, this.config.section(BucketSection).avatarUploadsPerUser);
    if (beyond.includes(current ?? '')) {
      // The current avatar is kept; the oldest other file goes in its place.
      const kept = await this.uploads.keysBeyond(actor.storeId, actor.userId, this.config.section(BucketSection).avatarUploadsPerUser - 1);
      await this.discardKeys(actor.storeId, actor.userId, kept.filter((k) => k !== current));
    } else {
      await this.discardKeys(actor.storeId, actor.userId, beyond);
    }
    return { accessKey, url: this.config.absoluteUrl(DOWNLOAD_PATH + accessKey, requestOrigin) };
  }

  // An avatar URL the user no longer uses: its file goes when the user uploaded it.
  async discard(storeId: string, userId: string, avatarUrl: string | null | undefined): Promise<void> {
    const key = accessKeyOf(avatarUrl);
    if (key) await this.discardKeys(storeId, userId, [key]);
  }

  // Every file of a user (before the user is deleted).
  async discardAll(storeId: string, userId: string): Promise<void> {
    await this.discardKeys(storeId, userId, await this.uploads.keysOf(storeId, userId));
  }

  private async discardKeys(storeId: string, userId: string, keys: string[]): Promise<void> {
    // Rows first: a file whose row is gone is never served as someone's again.
    const deleted = await this.uploads.delete(storeId, userId, keys);
    await Promise.all(deleted.map((k) => this.storage.delete(k)));
  }

  async downloadAvatar(accessKey: string): Promise<StoredObject> {
    const object = ACCESS_KEY.test(accessKey) ? await this.storage.get(accessKey) : undefined;
    if (!object) throw new AppError('FileNotFound', 'no such avatar');
    return object;
  }
}

// The access key of one of our download URLs (relative or absolute), else undefined.
function accessKeyOf(url: string | null | undefined): string | undefined {
  const at = url?.lastIndexOf(DOWNLOAD_PATH) ?? -1;
  const key = at >= 0 ? url!.slice(at + DOWNLOAD_PATH.length) : undefined;
  return key && ACCESS_KEY.test(key) ? key : undefined;
}

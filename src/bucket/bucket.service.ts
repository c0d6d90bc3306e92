import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { AvatarStorage, type StoredObject } from './avatar-storage.js';

// Recognised by content (magic bytes), never by file name or the client's declared type.
export const AVATAR_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
export const ACCESS_KEY = /^[a-f0-9]{40}$/;

@Injectable()
export class BucketService {
  constructor(
    private readonly storage: AvatarStorage,
    private readonly config: AppConfig,
  ) {}

  async uploadAvatar(data: Buffer | undefined): Promise<{ accessKey: string; url: string }> {
    if (!data?.length) throw new AppError('FileRequired', 'send the image as multipart field "file"');
    const type = await fileTypeFromBuffer(data);
    if (!type || !AVATAR_TYPES.has(type.mime)) throw new AppError('UnsupportedMediaType', 'avatars must be PNG, JPEG, WebP or GIF images');
    const accessKey = randomBytes(20).toString('hex');
    await this.storage.put(accessKey, { data, contentType: type.mime });
    return { accessKey, url: this.config.publicUrl(`/auth-api/bucket/userAvatars/download/key/${accessKey}`) };
  }

  async downloadAvatar(accessKey: string): Promise<StoredObject> {
    const object = ACCESS_KEY.test(accessKey) ? await this.storage.get(accessKey) : undefined;
    if (!object) throw new AppError('FileNotFound', 'no such avatar');
    return object;
  }
}

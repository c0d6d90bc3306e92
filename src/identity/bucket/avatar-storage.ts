import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AppConfig } from '../../platform/config/app-config.js';

export interface StoredObject {
  data: Buffer;
  contentType: string;
}

// Port: where uploaded avatars live. A folder under DATA_DIR by default; an object store can
// take its place without the bucket code changing.
export abstract class AvatarStorage {
  abstract put(key: string, object: StoredObject): Promise<void>;
  abstract get(key: string): Promise<StoredObject | undefined>;
  // Removing a file that is not there is not an error.
  abstract delete(key: string): Promise<void>;
}

export class LocalDiskStorage extends AvatarStorage {
  private ready?: Promise<unknown>;

  constructor(private readonly dir: string) {
    super();
  }

  async put(key: string, object: StoredObject): Promise<void> {
    await (this.ready ??= mkdir(this.dir, { recursive: true }));
    await writeFile(join(this.dir, `${key}.type`), object.contentType);
    await writeFile(join(this.dir, key), object.data);
  }

  async get(key: string): Promise<StoredObject | undefined> {
    try {
      const [data, contentType] = await Promise.all([readFile(join(this.dir, key)), readFile(join(this.dir, `${key}.type`), 'utf8')]);
      return { data, contentType };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await Promise.all([rm(join(this.dir, key), { force: true }), rm(join(this.dir, `${key}.type`), { force: true })]);
  }
}

export class MemoryStorage extends AvatarStorage {
  private readonly objects = new Map<string, StoredObject>();

  async put(key: string, object: StoredObject): Promise<void> {
    this.objects.set(key, object);
  }

  async get(key: string): Promise<StoredObject | undefined> {
    return this.objects.get(key);
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
}

export const avatarStorageProvider = {
  provide: AvatarStorage,
  inject: [AppConfig],
  useFactory: (config: AppConfig): AvatarStorage =>
    config.env.DATA_DIR === ':memory:' ? new MemoryStorage() : new LocalDiskStorage(resolve(config.env.DATA_DIR, 'bucket', 'userAvatars')),
};

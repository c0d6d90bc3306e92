import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AvatarUploadEntity } from './bucket.entity.js';

// Tenant-level: store id first.
@Injectable()
export class BucketRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(AvatarUploadEntity);
  }

  async insert(storeId: string, upload: Omit<AvatarUploadEntity, 'storeId'>): Promise<void> {
    await this.repo.insert({ ...upload, storeId });
  }

  // The user's files after the newest `keep`, oldest last.
  async keysBeyond(storeId: string, userId: string, keep: number): Promise<string[]> {
    const rows = await this.repo.find({ select: { accessKey: true }, where: { storeId, userId }, order: { createdAt: 'DESC', accessKey: 'ASC' }, skip: keep });
    return rows.map((r) => r.accessKey);
  }

  async keysOf(storeId: string, userId: string): Promise<string[]> {
    const rows = await this.repo.find({ select: { accessKey: true }, where: { storeId, userId } });
    return rows.map((r) => r.accessKey);
  }

  // Deletes the rows that are the user's; returns the keys deleted.
  async delete(storeId: string, userId: string, accessKeys: string[]): Promise<string[]> {
    if (!accessKeys.length) return [];
    const rows: { accessKey: string }[] = await this.repo
      .createQueryBuilder()
      .delete()
      .where('"storeId" = :storeId AND "userId" = :userId AND "accessKey" IN (:...accessKeys)', { storeId, userId, accessKeys })
      .returning('"accessKey"')
      .execute()
      .then((r) => r.raw);
    return rows.map((r) => r.accessKey.trim());
  }
}

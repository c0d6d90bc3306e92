import { Column, Entity, PrimaryColumn } from 'typeorm';

// Who uploaded which avatar file: caps the files a user holds, and lets a replaced avatar's
// file be deleted by its uploader only.
@Entity('avatar_uploads')
export class AvatarUploadEntity {
  @PrimaryColumn({ type: 'char', length: 40 })
  accessKey: string;

  @Column({ type: 'uuid' })
  storeId: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}

import { IsInt, Max, Min } from 'class-validator';

// Uploaded avatar images.
export class BucketSection {
  // Largest avatar upload, in bytes.
  @IsInt()
  @Min(1024)
  @Max(50 * 1024 * 1024)
  avatarMaxBytes: number;

  // Uploaded avatar files a user may hold; an upload beyond it deletes the user's oldest file
  // that is not the current avatar.
  @IsInt()
  @Min(2)
  @Max(1000)
  avatarUploadsPerUser: number;
}

import { IsBoolean } from 'class-validator';

// Settings that open a route to anyone (a policy's `publicWhen`, policy.ts).
export class PublicRoutesSection {
  @IsBoolean()
  userRegisterIsPublic: boolean;
}

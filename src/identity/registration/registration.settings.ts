import { IsBoolean } from 'class-validator';

// Who may register a store.
export class RegistrationSection {
  @IsBoolean()
  tenantRegisterIsPublic: boolean;
}

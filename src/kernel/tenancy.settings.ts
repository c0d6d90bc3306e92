import { Type } from 'class-transformer';
import { ArrayUnique, IsBoolean, IsIn, IsString, ValidateBy, ValidateNested } from 'class-validator';

// multi: stores are tenants. single: one organisation (the root store), roles superAdmin, admin
// and user, no store registration and no store targeting.
export const TENANCY_MODES = ['multi', 'single'] as const;

export type Tenancy = (typeof TENANCY_MODES)[number];

// A role value is an identifier or a whole number (the spec allows both); users and grants
// hold it in its text form, responses give it back as declared.
export class CustomRoleSetting {
  @IsString()
  name: string;

  @ValidateBy({
    name: 'isRoleValue',
    validator: {
      validate: (v: unknown) => (typeof v === 'string' && /^[A-Za-z][A-Za-z0-9_-]{0,62}$/.test(v)) || (typeof v === 'number' && Number.isSafeInteger(v)),
      defaultMessage: () => 'value must be a role identifier or a whole number',
    },
  })
  value: string | number;
}

// How the service is shared (stores as tenants, or one organisation) and the roles its users hold:
// read by the kernel's roles and by most identity features.
export class TenancySection {
  @IsIn(TENANCY_MODES)
  tenancy: Tenancy;

  @IsBoolean()
  usersHaveMultipleRoles: boolean;

  @ValidateNested({ each: true })
  @Type(() => CustomRoleSetting)
  @ArrayUnique((r: CustomRoleSetting) => String(r.value), { message: 'customRoles values must be unique (7 and "7" are the same role)' })
  customRoles: CustomRoleSetting[];
}

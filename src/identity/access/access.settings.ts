import { Type } from 'class-transformer';
import { ArrayUnique, IsBoolean, IsObject, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';
import { TenancySection } from '../../kernel/tenancy.settings.js';
import type { AppConfig } from '../../platform/config/app-config.js';
import { MachineTokenSection } from '../m2m/m2m.settings.js';

// Permission names: dotted identifiers (`report.read`). Uniqueness across groups, grants naming
// known permissions and attribute rules compiling are checked at boot by the access module.
export const PERMISSION_NAME = /^[A-Za-z][A-Za-z0-9_.:-]{0,99}$/;

export class PermissionGroupSetting {
  @IsString()
  @MaxLength(100)
  groupName: string;

  @Matches(PERMISSION_NAME, { each: true, message: 'permissions must be permission names (letters, digits, . _ : -)' })
  permissions: string[];
}

// Which kinds of grant take part in decisions.
export class PermissionTypesSetting {
  @IsBoolean()
  roleBased: boolean;

  @IsBoolean()
  userBased: boolean;

  @IsBoolean()
  userGroupBased: boolean;

  @IsBoolean()
  objectBased: boolean;

  @IsBoolean()
  tenantBased: boolean;

  @IsBoolean()
  attributeBased: boolean;
}

// A permission on objects of one kind whose fields satisfy a CEL expression (`object`, `session`).
export class AttributeRuleSetting {
  @Matches(/^[A-Za-z0-9_-]{1,100}$/, { message: 'name must be 1-100 letters, digits, _ or -' })
  name: string;

  @Matches(/^[A-Za-z][A-Za-z0-9]{0,62}$/, { message: 'dataObject must be a data object name' })
  dataObject: string;

  @IsString()
  @MaxLength(2000)
  whereClause: string;

  @Matches(PERMISSION_NAME, { each: true, message: 'permissions must be permission names' })
  permissions: string[];
}

// Access control (docs/access-control.md): user groups, permission-based access, the
// deployment's permissions, the kinds of grant that count, attribute rules and shipped grants.
export class AccessSection {
  @IsBoolean()
  userGroupsActive: boolean;

  @IsBoolean()
  userGroupsInTenantLevel: boolean;

  // Permission-based access control (src/identity/access): grants decide routes that declare a permission.
  @IsBoolean()
  pbacIsActive: boolean;

  @ValidateNested({ each: true })
  @Type(() => PermissionGroupSetting)
  permissionGroups: PermissionGroupSetting[];

  @ValidateNested()
  @Type(() => PermissionTypesSetting)
  permissionTypes: PermissionTypesSetting;

  @ValidateNested({ each: true })
  @Type(() => AttributeRuleSetting)
  @ArrayUnique((r: AttributeRuleSetting) => r.name, { message: 'attributeRules names must be unique' })
  attributeRules: AttributeRuleSetting[];

  // Grants that ship with the deployment: role value -> permissions, in every store.
  @IsObject()
  roleGrants: Record<string, string[]>;
}

// What access control reads: its own section, the roles (kernel) and the permissions of the
// machine services (m2m).
export type AccessSettings = AccessSection & TenancySection & MachineTokenSection;

export function accessSettings(config: AppConfig): AccessSettings {
  return { ...config.section(AccessSection), ...config.section(TenancySection), ...config.section(MachineTokenSection) };
}

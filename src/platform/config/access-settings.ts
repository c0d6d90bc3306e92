import { Type } from 'class-transformer';
import { IsBoolean, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

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

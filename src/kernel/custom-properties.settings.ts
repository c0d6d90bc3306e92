import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, Matches, Max, Min, ValidateNested } from 'class-validator';

export const CUSTOM_PROPERTY_TYPES = ['string', 'number', 'boolean'] as const;

export class CustomPropertySetting {
  @Matches(/^[A-Za-z][A-Za-z0-9_]{0,62}$/, { message: 'name must be an identifier (letters, digits, _)' })
  name: string;

  @IsIn(CUSTOM_PROPERTY_TYPES)
  type: (typeof CUSTOM_PROPERTY_TYPES)[number];

  @IsBoolean()
  required = false;

  // Longest accepted string value.
  @IsInt()
  @Min(1)
  @Max(10000)
  maxLength = 255;
}

// The deployment's own properties of users and stores (kernel/custom-properties.ts declares their validation).
export class CustomPropertiesSection {
  @ValidateNested({ each: true })
  @Type(() => CustomPropertySetting)
  customUserProperties: CustomPropertySetting[];

  @ValidateNested({ each: true })
  @Type(() => CustomPropertySetting)
  customStoreProperties: CustomPropertySetting[];
}

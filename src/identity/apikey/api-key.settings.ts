import { Type } from 'class-transformer';
import { IsBoolean, IsIn, Matches, ValidateNested } from 'class-validator';

export const API_KEY_LOCATIONS = ['bearer', 'header', 'query', 'cookie', 'body'] as const;

export type ApiKeyLocation = (typeof API_KEY_LOCATIONS)[number];

export class ApiKeySettings {
  @IsBoolean()
  enabled: boolean;

  // Where callers put the key: a bearer value starting with sk_<project>_, or a named
  // header, query parameter, cookie or body property.
  @IsIn(API_KEY_LOCATIONS)
  location: ApiKeyLocation;

  @Matches(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, { message: 'fieldName must be a header, parameter or property name' })
  fieldName: string;
}

// API keys: whether they are accepted and where callers put them.
export class ApiKeySection {
  @ValidateNested()
  @Type(() => ApiKeySettings)
  apiKeys: ApiKeySettings;
}

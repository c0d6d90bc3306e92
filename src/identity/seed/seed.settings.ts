import { Type } from 'class-transformer';
import { Allow, IsBoolean, IsString, Matches, ValidateNested } from 'class-validator';

export class SampleStoreSettings {
  @IsBoolean()
  enabled: boolean;

  @Matches(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/, { message: 'codename must be url-safe lower-case' })
  codename: string;

  @IsString()
  name: string;

  @IsString()
  fullname: string;
}

export class SuperAdminDataItem {
  @IsString()
  name: string;

  @Allow()
  value: unknown;
}

// What a first boot creates beside the root store.
export class SeedSection {
  @ValidateNested({ each: true })
  @Type(() => SuperAdminDataItem)
  superAdminData: SuperAdminDataItem[];

  @ValidateNested()
  @Type(() => SampleStoreSettings)
  sampleStore: SampleStoreSettings;
}

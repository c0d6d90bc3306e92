import { Type } from 'class-transformer';
import { IsInt, Max, Min, ValidateNested } from 'class-validator';

export class PagingSettings {
  @IsInt()
  @Min(1)
  defaultPageSize: number;

  @IsInt()
  @Min(1)
  @Max(1000)
  maxPageSize: number;
}

// Page sizes of every list route (kernel/paging.ts).
export class PagingSection {
  @ValidateNested()
  @Type(() => PagingSettings)
  paging: PagingSettings;
}

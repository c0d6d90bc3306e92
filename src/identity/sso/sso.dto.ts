import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class SsoLoginQuery {
  @ApiPropertyOptional({ description: 'Where the browser lands afterwards; must equal the configured address exactly.' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  redirectUrl?: string;
}

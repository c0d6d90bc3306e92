import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class SsoLoginQuery {
  @ApiPropertyOptional({ description: 'Where the browser lands afterwards: one of the configured addresses (settings `socialLogin.redirectUrl`, `socialLogin.redirectUrls`), exactly. Absent: the first of them.' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  redirectUrl?: string;
}

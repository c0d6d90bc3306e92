import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export interface Paging {
  pageNumber: number;
  pageRowCount: number;
  totalRowCount: number;
  pageCount: number;
}

// The `paging` object of a paged answer, as documented.
export class PageInfo implements Paging {
  @ApiProperty({ type: 'integer' }) pageNumber: number;
  @ApiProperty({ type: 'integer' }) pageRowCount: number;
  @ApiProperty({ type: 'integer' }) totalRowCount: number;
  @ApiProperty({ type: 'integer' }) pageCount: number;
}

export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, default: 1, description: 'Page number, from 1.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  pageNumber?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Rows per page. Default 20, at most 100 (settings `paging`); larger values are capped.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  pageRowCount?: number;
}

export interface PageRequest {
  pageNumber: number;
  pageRowCount: number;
  offset: number;
}

export function pageRequest(query: PageQuery, limits: { defaultPageSize: number; maxPageSize: number }): PageRequest {
  const pageNumber = query.pageNumber ?? 1;
  const pageRowCount = Math.min(query.pageRowCount ?? limits.defaultPageSize, limits.maxPageSize);
  return { pageNumber, pageRowCount, offset: (pageNumber - 1) * pageRowCount };
}

export function paging(page: PageRequest, totalRowCount: number): Paging {
  return {
    pageNumber: page.pageNumber,
    pageRowCount: page.pageRowCount,
    totalRowCount,
    pageCount: Math.ceil(totalRowCount / page.pageRowCount),
  };
}

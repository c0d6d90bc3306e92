import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsInt, IsOptional, Matches, Max, Min, ValidateBy, ValidateNested } from 'class-validator';

// An origin as browsers send it (`scheme://host[:port]`), `https://*.example.com` for any
// subdomain, or `*` (any origin, only without credentials).
const ORIGIN = /^(\*|https?:\/\/(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:]+\])(:\d{1,5})?)$/i;

export class CorsSettings {
  // null: local dev origins (localhost, 127.0.0.1 on any port) in development and test, none
  // in staging and production. A list replaces that default.
  @IsOptional()
  @IsArray()
  @Matches(ORIGIN, { each: true, message: 'allowedOrigins: each entry must be scheme://host[:port] (no path), https://*.domain, or *' })
  // Browsers refuse a credentialed answer to any origin.
  @ValidateBy({
    name: 'noAnyOriginWithCredentials',
    validator: {
      validate: (origins: unknown, args) => !(Array.isArray(origins) && origins.includes('*') && (args?.object as Partial<CorsSettings> | undefined)?.credentials === true),
      defaultMessage: () => '"*" cannot be combined with credentials: true (list the origins, or set credentials to false)',
    },
  })
  allowedOrigins: string[] | null;

  // Browsers send cookies and the Authorization header cross-origin only when this is true.
  @IsBoolean()
  credentials: boolean;

  // Response headers pages may read, beside x-request-id and the access-token headers.
  @IsArray()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { each: true, message: 'exposedHeaders: each entry must be a header name' })
  exposedHeaders: string[];

  // How long browsers may cache a preflight answer.
  @IsInt()
  @Min(0)
  @Max(86400)
  maxAgeSeconds: number;
}

// Which pages may call the service: HTTP routes and the event channel (cors-policy.ts).
export class CorsSection {
  // Cross-origin callers (browsers): HTTP routes and the event channel.
  @ValidateNested()
  @Type(() => CorsSettings)
  cors: CorsSettings;
}

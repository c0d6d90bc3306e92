import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';

// Access and refresh tokens.
export class TokenSection {
  // Short access tokens with rotating refresh tokens: the access token's lifetime in minutes,
  // or null for one token living as long as its session.
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1440)
  accessTokenMinutes: number | null;

  // How long a just-rotated refresh token still answers the pair it produced (two tabs
  // refreshing at once); 0: never, a second use ends the session.
  @IsInt()
  @Min(0)
  @Max(300)
  refreshReuseGraceSeconds: number;

  // The access tokens' `iss`; null: PUBLIC_URL (else the address the login came to) + /auth-api.
  @IsOptional()
  @IsString()
  @Matches(/^\S+$/, { message: 'tokenIssuer must be a URL or name without spaces' })
  tokenIssuer: string | null;

  // The access tokens' `aud`: one audience or a list; null: no `aud` claim.
  @IsOptional()
  @ValidateBy({
    name: 'isAudience',
    validator: {
      validate: (v: unknown) => {
        const list = Array.isArray(v) ? v : [v];
        return list.length > 0 && list.every((a) => typeof a === 'string' && /^\S{1,500}$/.test(a));
      },
      defaultMessage: () => 'tokenAudience must be a string or a non-empty list of strings, without spaces',
    },
  })
  tokenAudience: string | string[] | null;
}

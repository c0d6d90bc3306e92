export const CODENAME_MAX_LENGTH = 40;

// What a client may send as a codename (header, query, `after`): anything else names no store,
// known without asking the database.
export const CODENAME_SHAPE = /^[A-Za-z0-9-]{1,64}$/;

// Codenames that would read as something else in URLs, sub-domains or the SaaS level.
export const RESERVED_CODENAMES = new Set([
  'root', 'admin', 'api', 'auth', 'auth-api', 'www', 'app', 'docs', 'health', 'metrics', 'events', 'notifications', 'static', 'assets',
]);

// Lower-case, url-safe form of a store name: accents folded, every run of other characters
// becomes one dash. The result may still be taken: `uniqueCodename` adds a suffix.
// Latin letters that Unicode normalization does not decompose into a base letter and a mark.
const FOLD: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' };

export function codenameBase(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (c) => FOLD[c])
    .replace(/['’]/g, '') // "Tom's" is one word
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, CODENAME_MAX_LENGTH - 4) // room for a `-NNN` suffix
    .replace(/-+$/g, '');
  if (!slug) return 'store';
  return RESERVED_CODENAMES.has(slug) ? `${slug}-store` : slug;
}

// The first of `base`, `base-2`, `base-3`... that is not in `taken`.
export function uniqueCodename(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

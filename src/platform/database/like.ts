// A LIKE / ILIKE pattern that matches `text` anywhere in a value: the text's own `\`, `%` and `_`
// match only themselves. The statement must say `ESCAPE '\'` (PostgreSQL's default escape, said
// out loud so the pattern does not depend on it).
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

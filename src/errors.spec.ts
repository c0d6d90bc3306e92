import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { projectPath } from './platform/config/project-path.js';
import { ERROR_CATALOGUE, ERROR_SETS } from './errors.js';
import type { ErrorSet } from './kernel/errors.js';
import { ERRORS_DOC, renderErrorsDoc } from '../scripts/errors-doc.js';

describe('error catalogue', () => {
  const readme = readFileSync(projectPath('docs/errors.md'), 'utf8');

  it.each(Object.entries(ERROR_CATALOGUE))('README documents %s with its status and message', (code, entry) => {
    expect(readme).toContain(`| \`${code}\` | ${entry.status} | \`${entry.message}\` |`);
  });

  it('every message is a message code, except the spec\'s /currentuser text', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      if (code === 'NoLoginFound') expect(entry.message).toBe('No login found');
      else expect(entry.message).toMatch(/^errMsg_[A-Za-z0-9]+$/);
    }
  });

  it('docs/errors.md is what npm run docs:errors writes (run it and commit the page when this fails)', () => {
    expect(readme).toBe(renderErrorsDoc());
    expect(ERRORS_DOC).toBe('docs/errors.md');
  });

  // A feature's codes compile wherever they are thrown (DeclaredErrors), but the filter answers
  // only from what src/errors.ts registers: a forgotten file would turn its errors into 500s.
  it('registers every *.errors.ts under src/, each set naming its own file', async () => {
    const files = readdirSync(projectPath('src'), { recursive: true, encoding: 'utf8' })
      .map((file) => `src/${file.split('\\').join('/')}`)
      .filter((file) => file.endsWith('.errors.ts') || file === 'src/kernel/errors.ts')
      .sort();
    const declared: ErrorSet[] = [];
    for (const file of files) {
      const module = (await import(projectPath(file))) as Record<string, unknown>;
      const sets = Object.values(module).filter((value): value is ErrorSet => typeof value === 'object' && value !== null && 'codes' in value && 'file' in value);
      expect({ file, sets: sets.map((set) => set.file) }).toEqual({ file, sets: [file] });
      declared.push(...sets);
    }
    expect(ERROR_SETS.map((set) => set.file).sort()).toEqual(declared.map((set) => set.file).sort());
    expect(new Set(ERROR_SETS)).toEqual(new Set(declared));
  });
});

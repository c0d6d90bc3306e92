import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { projectPath } from '../platform/config/project-path.js';
import { ERROR_CATALOGUE } from './errors.js';

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
});

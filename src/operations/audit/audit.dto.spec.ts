import { describe, expect, it } from '@jest/globals';
import { csvField } from './audit.dto.js';

describe('a CSV field of the export', () => {
  it('is quoted, whatever it holds, with its quotes doubled', () => {
    expect(csvField('')).toBe('""');
    expect(csvField('plain')).toBe('"plain"');
    expect(csvField('a;b,c')).toBe('"a;b,c"');
    expect(csvField('say "hi"\nbye')).toBe('"say ""hi""\nbye"');
  });

  it('starting with = + - @, a tab or a carriage return, is kept text by a leading quote mark', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r']) expect(csvField(`${lead}1+2`)).toBe(`"'${lead}1+2"`);
    // Only at the start: elsewhere they are text to every spreadsheet.
    expect(csvField('1+2=3')).toBe('"1+2=3"');
  });
});

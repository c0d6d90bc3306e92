import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The project root is the nearest folder above this file with a package.json: the same answer
// from `src/` under ts-jest and from `dist/src/` when built.
let root: string | undefined;

export function projectPath(...parts: string[]): string {
  if (!root) {
    let dir = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(dir, 'package.json'))) {
      const up = dirname(dir);
      if (up === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
      dir = up;
    }
    root = dir;
  }
  return join(root, ...parts);
}

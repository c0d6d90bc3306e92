import { createHash } from 'node:crypto';

// A 5×5 mirrored identicon as SVG, fully determined by the seed: the service serves generated
// avatars itself, with no third-party image host and nothing to store.
export function identiconSvg(seed: string): string {
  const hash = createHash('sha256').update(seed).digest();
  const hue = ((hash[0] << 8) | hash[1]) % 360;
  const fg = `hsl(${hue} 55% 48%)`;
  const cells: string[] = [];
  for (let row = 0; row < 5; row++) {
    for (let col = 0; col < 3; col++) {
      if ((hash[2 + row * 3 + col] & 1) === 0) continue;
      for (const x of new Set([col, 4 - col])) {
        cells.push(`<rect x="${x + 1}" y="${row + 1}" width="1" height="1"/>`);
      }
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 7 7" width="128" height="128" shape-rendering="crispEdges">` +
    `<rect width="7" height="7" fill="hsl(${hue} 40% 94%)"/><g fill="${fg}">${cells.join('')}</g></svg>`
  );
}

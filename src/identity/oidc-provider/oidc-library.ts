import type { Logger } from '@nestjs/common';

type Library = typeof import('oidc-provider');

// oidc-provider writes to the console when it is imported on a Node.js older than its LTS of
// choice ("Unsupported runtime", on Node 20; it runs there). The service's log is JSON lines:
// the library is loaded on first use, that one line held back and said once through the logger.
const NOTICE = 'oidc-provider WARNING:';
let loading: Promise<Library> | undefined;

export function oidcLibrary(logger: Logger): Promise<Library> {
  loading ??= (async () => {
    const warn = console.warn;
    const held: string[] = [];
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes(NOTICE)) held.push(args[0]);
      else warn(...args);
    };
    try {
      return await import('oidc-provider');
    } finally {
      console.warn = warn;
      // eslint-disable-next-line no-control-regex
      for (const line of held) logger.warn({ library: 'oidc-provider', node: process.version }, line.replace(/\x1b\[[0-9;]*m/g, ''));
    }
  })();
  return loading;
}

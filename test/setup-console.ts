// oidc-provider, the tests' stand-in identity provider (test/oauth-peers.ts), warns on import in
// every test file that loads it that Node 20 is not a runtime it supports; it runs there. That one
// message is dropped; every other console.warn goes through as before.
const UNSUPPORTED_RUNTIME = 'oidc-provider WARNING: Unsupported runtime.';

const warn = console.warn;
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].includes(UNSUPPORTED_RUNTIME)) return;
  warn(...args);
};

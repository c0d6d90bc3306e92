import type { EnvVars } from './env.js';

// The service's base address as a client on this machine reaches it: PUBLIC_URL when set, else
// the address it listens on (0.0.0.0 and :: become localhost).
export function serviceUrl(env: Pick<EnvVars, 'PUBLIC_URL' | 'HOST' | 'PORT'>, port: number = env.PORT): string {
  if (env.PUBLIC_URL) return env.PUBLIC_URL.replace(/\/$/, '');
  const host = ['0.0.0.0', '::'].includes(env.HOST) ? 'localhost' : env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${port}`;
}

// `node --import <this file>`: packages a script outside the project imports (the shared
// harness's autocannon) resolve from this project's node_modules when not found beside it.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const PROJECT = new URL('../../package.json', import.meta.url).href;

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<unknown>;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<unknown> {
  try {
    return await next(specifier, context);
  } catch (error) {
    const bare = !/^(\.|\/|node:|file:|data:)/.test(specifier);
    if (!bare || (error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return next(specifier, { ...context, parentURL: PROJECT });
  }
}

// Loaded with --import on the main thread it installs itself; in the loader thread it is the hook.
if (isMainThread) register(import.meta.url);

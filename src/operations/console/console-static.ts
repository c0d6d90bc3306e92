import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { AppError, errorBody } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import type { ConsoleSettings } from './console.settings.js';
import './console.errors.js';

// The console's documents may load only themselves and call only this origin (the API).
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";
const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);

interface StaticFile {
  body: Buffer;
  etag: string;
  gzip?: Buffer;
  type: string;
}

// Reads the built console once, at boot: a few small files, kept in memory with their gzip (no
// file-system access, no stat per request). A rebuilt console is served after a restart.
function loadFiles(dir: string, project: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const full = join(at, name);
      if (statSync(full).isDirectory()) {
        walk(full);
        continue;
      }
      const ext = extname(name).toLowerCase();
      let body = readFileSync(full);
      // The page learns the project codename, which names the store header it sends.
      if (name === 'index.html' && at === dir) body = Buffer.from(body.toString('utf8').replace('</head>', `<meta name="console-project" content="${escapeHtml(project)}"></head>`));
      const gzip = COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body) : undefined;
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      files.set('/' + relative(dir, full).split(sep).join('/'), { body, etag, gzip, type: TYPES[ext] ?? 'application/octet-stream' });
    }
  };
  walk(dir);
  return files;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface ConsoleFiles {
  handle: (req: Request, res: Response, next: NextFunction) => void;
  // Where the console is served; undefined when it is not built (its path then answers
  // ConsoleNotBuilt), so that the start-up line names it only when it is there.
  served: string | undefined;
}

// Serves the single-page app under `settings.path`: hashed assets for a year, index.html for
// every other path under it (the app's own routes, /console/users...) revalidated each time, with
// the console's CSP. Not Nest routes: they are outside the route-policy audit (docs/console.md).
// Other methods than GET and HEAD go on to the API (which answers 404). Undefined when disabled.
export function consoleStatic(settings: ConsoleSettings, dir: string, project: string, log: (message: string) => void): ConsoleFiles | undefined {
  if (!settings.enabled) return undefined;
  const base = settings.path;
  let files: Map<string, StaticFile> | undefined;
  try {
    files = loadFiles(dir, project);
    if (!files.has('/index.html')) files = undefined;
  } catch {
    files = undefined;
  }
  if (!files) log(`admin console not built (no ${join(dir, 'index.html')}): ${base} answers 404 until \`npm run build\``);

  const handle = (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    if (path !== base && !path.startsWith(base + '/')) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (!files) {
      const error = new AppError('ConsoleNotBuilt', 'The admin console is not built on this server: run `npm run build`, then restart the service.');
      res.status(error.status).json(errorBody(error, (req as ContextRequest).ctx?.requestId));
      return;
    }
    const rest = path.slice(base.length) || '/';
    const asset = rest !== '/index.html' ? files.get(rest) : undefined;
    if (!asset && rest.startsWith('/assets/')) {
      const error = new AppError('NotFound', `No console file ${rest}.`);
      res.status(error.status).json(errorBody(error, (req as ContextRequest).ctx?.requestId));
      return;
    }
    const file = asset ?? files.get('/index.html')!;
    // Hashed names never change content; the rest (index.html, files without a hash) revalidate.
    res.setHeader('Cache-Control', asset && rest.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
    if (file.type.startsWith('text/html')) res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('ETag', file.etag);
    res.append('Vary', 'Accept-Encoding');
    if (req.headers['if-none-match'] === file.etag) {
      res.status(304).end();
      return;
    }
    res.setHeader('Content-Type', file.type);
    const gzip = file.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? file.gzip! : file.body;
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', body.length);
    res.status(200);
    if (req.method === 'HEAD') res.end();
    else res.end(body);
  };
  return { handle, served: files ? base : undefined };
}

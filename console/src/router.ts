import { useEffect, useState } from 'preact/hooks';

// The console's own paths, under the base it is served at (`/console/`): a tiny router on the
// History API. The service answers index.html for every path under the base (deep links).
export const BASE = import.meta.env.BASE_URL.replace(/\/$/, '');

export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path.replace(/^\/+|\/+$/g, '');
}

export function navigate(path: string): void {
  history.pushState(null, '', `${BASE}/${path}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

// Internal links: a normal <a href> (open in a new tab works), routed here on a plain click.
export function onLink(e: MouseEvent): void {
  const a = (e.target as Element).closest('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
  const href = a.getAttribute('href') ?? '';
  if (!href.startsWith(BASE + '/') && href !== BASE) return;
  e.preventDefault();
  navigate(href.slice(BASE.length + 1));
}

// `GET /auth-api/v1/users/:id` → getUsersById: the method, then the path without the service
// prefix and version, parameters as `By<Name>`.
export function routeName(route: string, method: string): string {
  const words = route
    .split('/')
    .filter((p) => p && p !== 'auth-api' && !/^v\d+$/.test(p))
    .map((p) => (p.startsWith(':') ? `By${cap(p.slice(1))}` : p.split(/[^A-Za-z0-9]+/).map(cap).join('')));
  return method.toLowerCase() + words.join('');
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

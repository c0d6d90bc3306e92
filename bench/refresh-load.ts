// The requests of a refresh load (autocannon `requests`): each connection's session rotating its
// own token. autocannon clears a connection's context after each request of a one-request list,
// so the tokens live in a shared queue instead: a request takes one, its answer puts the
// successor back (before the connection builds its next request). The successor is cut out of
// the answer rather than parsed with the rest of it: the generator shares the machine's cores
// with the service (the harness's own login generator only looks for a marker in its answers).
const FIELD = '"refreshToken":"';

export function refreshRequests(tokens: string[], headers: Record<string, string>): unknown[] {
  return [
    {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      setupRequest: (req: Record<string, unknown>) => ({ ...req, body: `{"refreshToken":"${tokens.shift()}"}` }),
      onResponse: (status: number, body: string) => {
        if (status !== 200) return;
        const start = body.indexOf(FIELD) + FIELD.length;
        tokens.push(body.slice(start, body.indexOf('"', start)));
      },
    },
  ];
}

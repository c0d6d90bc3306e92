// Who is calling: a signed-in user (an access token) or an API key acting for its creator.
export interface SvcPrincipal {
  kind: 'user' | 'apiKey';
  userId?: string;
  // The caller's own store (a super administrator's is the root store).
  storeId: string;
  // The store's codename, once known: from introspection, or the `store` option.
  store?: string;
  // The caller's roles: from introspection (with `apiKey`), else read from the service when a
  // route asks for roles; `[]` until then.
  roles: string[];
  sessionId?: string;
  // The permissions the caller holds, once a route asked for one (`@RequirePermission`).
  permissions?: string[];
  // What the sign-in proved (access tokens): `aal1`, `aal2`.
  acr?: string;
  amr?: string[];
  // The credential as it was sent, for calls to the service on the caller's behalf.
  token: string;
}

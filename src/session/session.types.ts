// What a request knows of its login: the session as cached, composed from the session row and
// the user it belongs to.
export interface SessionData {
  sessionId: string;
  userId: string;
  storeId: string;
  roles: string[];
  email: string | null;
  mobile: string | null;
  fullname: string | null;
  // ISO time; the token's `exp` is the same instant.
  expiresAt: string;
  // How the caller authenticated: a login (default) or an API key (sessionId is the key's id).
  principal?: 'user' | 'apiKey';
}

export interface SessionMeta {
  ip?: string;
  userAgent?: string;
}

// Where a session's tokens are kept between page loads and app starts. Each adapter keeps one
// string per key; a call may be synchronous or return a promise.
export interface TokenStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

// In memory: the session dies with the page or the process (servers, tests, a strict SPA).
export function memoryStorage(): TokenStorage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

interface WebStorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

// The browser's localStorage (shared by the tabs of the origin, kept across restarts), or
// sessionStorage when given. Readable by any script of the page: with a strict CSP only.
export function webStorage(storage?: WebStorageLike): TokenStorage {
  const target = storage ?? (globalThis as { localStorage?: WebStorageLike }).localStorage;
  if (!target) throw new TypeError('webStorage: this environment has no localStorage; give one, or use memoryStorage()');
  return {
    getItem: (key) => target.getItem(key),
    setItem: (key, value) => target.setItem(key, value),
    removeItem: (key) => target.removeItem(key),
  };
}

// The shape of Expo's SecureStore (iOS Keychain, Android Keystore) and of the libraries like it:
// `secureStorage(SecureStore)` in a React Native app.
export interface SecureStoreLike {
  getItemAsync(key: string): Promise<string | null>;
  setItemAsync(key: string, value: string): Promise<void>;
  deleteItemAsync(key: string): Promise<void>;
}

// Secure stores take keys of letters, digits, `.`, `-` and `_` only.
const secureKey = (key: string) => key.replace(/[^A-Za-z0-9._-]/g, '_');

export function secureStorage(store: SecureStoreLike): TokenStorage {
  return {
    getItem: (key) => store.getItemAsync(secureKey(key)),
    setItem: (key, value) => store.setItemAsync(secureKey(key), value),
    removeItem: (key) => store.deleteItemAsync(secureKey(key)),
  };
}

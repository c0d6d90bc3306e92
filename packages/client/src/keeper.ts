import { ServiceError } from './errors.js';
import { sessionOf, type Session, type SignInAnswer } from './session.js';
import type { TokenStorage } from './storage.js';

// Why the session changed, as `onSessionChange` listeners hear it.
export type SessionChange = 'signedIn' | 'updated' | 'refreshed' | 'signedOut' | 'ended' | 'otherTab';

export type SessionListener = (session: Session | undefined, change: SessionChange) => void;

// The parts of the browser's Web Locks and BroadcastChannel this client uses (absent in React
// Native, and Node has no Web Locks): without them, single flight holds within this instance.
interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}
interface ChannelLike {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  close(): void;
}

export interface KeeperOptions {
  storage: TokenStorage;
  key: string;
  cookies: boolean;
  refreshAheadMs: number;
  // Calls POST /auth-api/refresh for the session (its refresh token in the body, or the cookie).
  refresh: (session: Session) => Promise<{ ok: true; answer: SignInAnswer } | { ok: false; error: ServiceError }>;
  locks?: LockManagerLike | undefined;
  channel?: ChannelLike | undefined;
}

const decode = (text: string | null): Session | undefined => {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as Session;
  } catch {
    return undefined;
  }
};

// Holds the session: reads it from storage once, writes each change there, tells listeners (and
// the other tabs, which read it again), and refreshes its token once for everyone who asks at
// the same time, in this instance and, with Web Locks, in every tab of the origin.
export class SessionKeeper {
  private current: Session | undefined;
  private readonly loaded: Promise<void>;
  private refreshing: Promise<Session | undefined> | undefined;
  private readonly listeners = new Set<SessionListener>();

  constructor(private readonly options: KeeperOptions) {
    this.loaded = this.read().then((s) => void (this.current = s));
    options.channel?.addEventListener('message', () => void this.reload());
  }

  async session(): Promise<Session | undefined> {
    await this.loaded;
    return this.current;
  }

  // The session as last read, without waiting (undefined before storage answered).
  peek(): Session | undefined {
    return this.current;
  }

  onChange(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async accept(store: string, answer: SignInAnswer, change: SessionChange): Promise<Session> {
    await this.loaded;
    const previous = this.current && this.current.sessionId === answer.sessionId ? this.current : undefined;
    const next = sessionOf(store, answer, previous, !this.options.cookies);
    await this.set(next, change);
    return next;
  }

  async set(next: Session | undefined, change: SessionChange): Promise<void> {
    await this.loaded;
    this.current = next;
    if (next) await this.options.storage.setItem(this.options.key, JSON.stringify(next));
    else await this.options.storage.removeItem(this.options.key);
    this.options.channel?.postMessage({ key: this.options.key });
    this.emit(next, change);
  }

  // True when the session's access token expires within the refresh margin.
  dueForRefresh(session: Session): boolean {
    return session.expiresAt !== undefined && session.expiresAt - Date.now() <= this.options.refreshAheadMs && this.canRefresh(session);
  }

  canRefresh(session: Session): boolean {
    return this.options.cookies || session.refreshToken !== undefined;
  }

  // One refresh for every concurrent caller. `seen` is the access token the caller holds: when the
  // session has already moved past it (another call or tab refreshed), that session is the answer.
  refresh(seen?: Session): Promise<Session | undefined> {
    this.refreshing ??= this.locked(() => this.rotate(seen)).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  dispose(): void {
    this.options.channel?.close();
    this.listeners.clear();
  }

  private async rotate(seen?: Session): Promise<Session | undefined> {
    // Another tab may have refreshed while this one waited for the lock: the stored session tells.
    const stored = (await this.read()) ?? undefined;
    const held = this.current;
    if (stored?.sessionId !== held?.sessionId || stored?.refreshToken !== held?.refreshToken || stored?.expiresAt !== held?.expiresAt) {
      this.current = stored;
      this.emit(stored, 'otherTab');
    }
    const session = this.current;
    if (!session || !this.canRefresh(session)) return session;
    if (seen && (seen.accessToken !== session.accessToken || seen.expiresAt !== session.expiresAt) && !this.dueForRefresh(session)) return session;
    const result = await this.options.refresh(session);
    if (result.ok) return this.accept(session.store, result.answer, 'refreshed');
    // A spent, reused or unknown refresh token ends the session here, once; a failure to reach
    // the service does not.
    if (result.error.status === 401 || result.error.errCode === 'RefreshTokenInvalid' || result.error.errCode === 'RefreshTokenReused') {
      await this.set(undefined, 'ended');
      return undefined;
    }
    throw result.error;
  }

  private locked<T>(work: () => Promise<T>): Promise<T> {
    const locks = this.options.locks;
    return locks ? locks.request(`${this.options.key}:refresh`, work) : work();
  }

  private async read(): Promise<Session | undefined> {
    return decode(await this.options.storage.getItem(this.options.key));
  }

  private async reload(): Promise<void> {
    const next = await this.read();
    this.current = next;
    this.emit(next, 'otherTab');
  }

  private emit(session: Session | undefined, change: SessionChange): void {
    for (const listener of this.listeners) {
      try {
        listener(session, change);
      } catch {
        // a listener's failure is its own
      }
    }
  }
}

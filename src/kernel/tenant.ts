// The tenant a request targets: a store, as every feature sees it. The store feature persists it
// (StoreEntity implements this shape); the others read it from the request or a service.
export interface Tenant {
  id: string;
  // Unique, url-safe, lower-case; `root` is the SaaS level.
  codename: string;
  name: string;
  fullname: string;
  avatar: string;
  isActive: boolean;
  // The store owner; null for root (owned by the SaaS level).
  ownerId: string | null;
  language: string | null;
  customData: Record<string, unknown>;
  recordVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

// The SaaS level's own store.
export const ROOT_CODENAME = 'root';

// Routes the console needs that another branch adds to the API (issue 28): GET /v1/users with
// `search`, GET and PATCH /v1/store, GET /v1/stores, GET /v1/overview. Until that branch is
// merged, this branch's OpenAPI document (and so schema.d.ts) lacks them, so their shapes are
// typed here by hand. After the merge, run `npm run console:client`, delete this file and call
// `api` (client.ts) with the generated types instead.
import type createClient from 'openapi-fetch';
import type { components } from './schema';
import { api } from './client';

type Schemas = components['schemas'];
type Envelope = Schemas['Envelope'];
type ErrorJson = { 'application/json': Schemas['ErrorBody'] };
type Failures = { 400: { content: ErrorJson }; 401: { content: ErrorJson }; 403: { content: ErrorJson }; 404: { content: ErrorJson } };

export interface StoreRecord {
  id: string;
  codename: string;
  name: string;
  fullname: string;
  avatar: string;
  isActive: boolean;
  createdAt?: string;
  updatedAt?: string;
}

export interface SignInBucket {
  from: string;
  succeeded: number;
  failed: number;
}

export interface Overview {
  status: 'OK';
  users: number;
  activeSessions: number;
  signIns: { last24h: SignInBucket[]; last7d: SignInBucket[] };
}

type Op<Query, Body, Answer> = {
  parameters: { query?: Query; header?: Record<string, string>; path?: never; cookie?: never };
  responses: { 200: { content: { 'application/json': Answer } } } & Failures;
} & ([Body] extends [never] ? { requestBody?: never } : { requestBody: { content: { 'application/json': Body } } });

type Paging = { pageNumber?: number; pageRowCount?: number };

export interface PendingPaths {
  '/auth-api/v1/users': { get: Op<Paging & { search?: string }, never, Envelope & { users: Schemas['UserResponse'][] }> };
  '/auth-api/v1/store': {
    get: Op<never, never, Envelope & { store: StoreRecord }>;
    patch: Op<never, Partial<Pick<StoreRecord, 'name' | 'fullname' | 'avatar' | 'isActive'>>, Envelope & { store: StoreRecord }>;
  };
  '/auth-api/v1/stores': { get: Op<Paging & { search?: string }, never, Envelope & { stores: StoreRecord[] }> };
  '/auth-api/v1/overview': { get: Op<never, never, Overview> };
}

// The same client (token, store header, refresh) typed with the routes above.
export const pendingApi = api as unknown as ReturnType<typeof createClient<PendingPaths>>;

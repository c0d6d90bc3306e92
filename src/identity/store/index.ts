// The store feature's public shapes, for other features (its module and service are imported
// from their own files).
export { StoreInput, StoreResponse, toStoreResponse } from './store.dto.js';

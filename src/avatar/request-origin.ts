import { requestStorage } from '../common/request-context.js';

// The address the HTTP request being handled was sent to (scheme and host; the scheme honours
// TRUST_PROXY), if any: links made on the way (generated avatars) are absolute for that client,
// as upload links are.
export function requestOrigin(): string | undefined {
  return requestStorage.getStore()?.origin;
}

// What other features use of OAuth clients: the service (import `OAuthClientModule` to inject
// it), its shapes, and `secretHash`, how a presented client secret is compared.
export type { ClientScope, GrantType, OAuthClientEntity, PublicJwks, TokenEndpointAuthMethod } from './oauth-client.entity.js';
export { OAuthClientModule } from './oauth-client.module.js';
export { OAuthClientService, secretHash, type OidcClientMetadata } from './oauth-client.service.js';

// Every feature's tables, for the data source (app.module.ts, ormconfig.ts): composed here, at
// the root, so that the database layer knows no feature.
import { ApiKeyEntity } from './identity/apikey/api-key.entity.js';
import { AvatarUploadEntity } from './identity/bucket/bucket.entity.js';
import { AuditCheckpointEntity, AuditEntryEntity } from './operations/audit/audit.entity.js';
import { PasskeyChallengeEntity, PasskeyEntity } from './identity/passkey/passkey.entity.js';
import { RecoveryCodeEntity, TotpFactorEntity } from './identity/mfa/mfa.entity.js';
import { OAuthClientEntity } from './identity/oauth-client/oauth-client.entity.js';
import { OidcPayloadEntity } from './identity/oidc-provider/oidc-payload.entity.js';
import { NotificationEntity } from './delivery/notification/notification.entity.js';
import { WebhookDeliveryEntity, WebhookEndpointEntity } from './channels/webhooks/webhook.entity.js';
import { PermissionGrantEntity, UserGroupEntity, UserGroupMemberEntity } from './identity/access/access.entity.js';
import { SessionEntity } from './identity/session/session.entity.js';
import { RefreshTokenEntity } from './identity/token/refresh-token.entity.js';
import { SigningKeyEntity } from './identity/signing-key/signing-key.entity.js';
import { SocialCodeEntity, SocialIdentityEntity } from './identity/social/social.entity.js';
import { StoreEntity } from './identity/store/store.entity.js';
import { UserEntity } from './identity/user/user.entity.js';
import { VerificationCodeEntity } from './identity/verification/verification.entity.js';

export const ENTITIES = [StoreEntity, UserEntity, SessionEntity, SigningKeyEntity, NotificationEntity, ApiKeyEntity, AvatarUploadEntity, VerificationCodeEntity, SocialIdentityEntity, SocialCodeEntity, UserGroupEntity, UserGroupMemberEntity, PermissionGrantEntity, RefreshTokenEntity, PasskeyEntity, PasskeyChallengeEntity, TotpFactorEntity, RecoveryCodeEntity, AuditEntryEntity, AuditCheckpointEntity, WebhookEndpointEntity, WebhookDeliveryEntity, OAuthClientEntity, OidcPayloadEntity];

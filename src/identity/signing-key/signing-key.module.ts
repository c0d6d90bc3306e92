import { Module } from '@nestjs/common';
import { KeyService } from './key.service.js';
import { SigningKeyRepository } from './signing-key.repository.js';

// The service's signing keys (RS256, encrypted at rest, rotated): the token feature signs access
// tokens with them, the audit log its checkpoints; the discovery routes publish their public half.
@Module({
  providers: [SigningKeyRepository, KeyService],
  exports: [KeyService],
})
export class SigningKeyModule {}

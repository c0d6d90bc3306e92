import { createPublicKey, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../platform/clock/clock.js';
import { AppError } from '../../kernel/errors.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AuditLog, auditContext } from '../../kernel/audit.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { MachineTokenError, verifyMachineToken, type VerifiedMachineToken } from './machine-token.js';
import { UsedTokenIds } from './used-token-ids.js';
import { MachineTokenSection } from './m2m.settings.js';

// Checks machine tokens against the public keys of the services listed in settings, and the
// block and allow lists in staging and production.
@Injectable()
export class MachineAuthService implements OnModuleInit {
  private readonly publicKeys = new Map<string, KeyObject>();
  readonly header: string;

  constructor(
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly usedIds: UsedTokenIds,
    private readonly checks: BootChecks,
    private readonly audit: AuditLog,
  ) {
    this.header = `${config.env.PROJECT_CODENAME}-machine-token`;
  }

  // Each service's key, read at init; a bad one is reported with the other settings problems.
  onModuleInit(): void {
    const { config } = this;
    const problems: string[] = [];
    for (const service of config.section(MachineTokenSection).machineTokens.services) {
      try {
        const pem = typeof service.publicKey === 'string' ? service.publicKey : config.secretFromEnv(service.publicKey.env);
        if (!pem) throw new Error('the public key is not set');
        const key = createPublicKey(pem);
        if (key.asymmetricKeyType !== 'ed25519') throw new Error('the public key is not Ed25519');
        this.publicKeys.set(service.name, key);
      } catch (error) {
        problems.push(`settings.machineTokens.services: ${service.name}: ${(error as Error).message}`);
      }
    }
    this.checks.report(problems);
  }

  hasToken(credentials: { headers: IncomingHttpHeaders }): boolean {
    return typeof credentials.headers[this.header] === 'string';
  }

  // The calling service's name, or 401 / 403.
  async authenticate(req: ContextRequest): Promise<string> {
    const token = req.headers[this.header];
    if (typeof token !== 'string' || !token) throw new AppError('Unauthorized', 'a machine token is required');
    let verified: VerifiedMachineToken;
    try {
      verified = await verifyMachineToken(token, {
        publicKeys: this.publicKeys,
        method: req.method,
        path: req.originalUrl,
        body: req.rawBody,
        now: this.clock.now(),
      });
    } catch (error) {
      // The token's issuer is not trusted before its signature holds: no service is named.
      this.refused(req, null, refusalReason(error));
      throw new AppError('Unauthorized', `machine token refused: ${error instanceof MachineTokenError ? error.message : 'invalid token'}`);
    }
    const { service, jti, exp } = verified;
    // Claimed only once the signature holds: nobody else can spend a service's jti.
    if (!(await this.usedIds.claim(`${service}:${jti}`, exp * 1000))) {
      this.refused(req, service, 'replay');
      throw new AppError('Unauthorized', 'machine token refused: already used');
    }
    const { NODE_ENV } = this.config.env;
    if (NODE_ENV === 'staging' || NODE_ENV === 'production') {
      const { machineToMachineBlockList, allowedM2MClients } = this.config.section(MachineTokenSection).machineTokens;
      if (machineToMachineBlockList.includes(service) || (allowedM2MClients.length && !allowedM2MClients.includes(service))) {
        this.refused(req, service, machineToMachineBlockList.includes(service) ? 'blocked' : 'not_allowed');
        throw new AppError('MachineClientNotAllowed', `service ${service} may not call this service`);
      }
    }
    return service;
  }

  // Queued: the refusal writes nothing. The targeted store, or the root store (the default).
  private refused(req: ContextRequest, service: string | null, reason: string): void {
    const storeId = req.ctx?.store?.id;
    if (!storeId) return;
    void this.audit.record({ storeId, action: 'machine.token.refused', outcome: 'failure', reason, actor: { type: 'machine', id: service }, details: { method: req.method } }, auditContext(req));
  }
}

function refusalReason(error: unknown): string {
  const message = error instanceof MachineTokenError ? error.message : '';
  if (message === 'unknown service') return 'unknown_service';
  if (message === 'expired') return 'expired';
  if (message.startsWith('the token was made for another route')) return 'wrong_route';
  if (message.startsWith('the request body')) return 'wrong_body';
  return 'bad_signature';
}

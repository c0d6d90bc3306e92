import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Clock } from '../../platform/clock/clock.js';
import type { OidcPayloadRepository } from './oidc-payload.repository.js';

// The store's OAuth client as the provider reads it (undefined: no such client in this store).
export type ClientLookup = (clientId: string) => Promise<AdapterPayload | undefined>;

// oidc-provider's storage interface over the `oidc_payload` table, for one store and one model.
// Clients are read from the store's OAuth clients and never written.
export class OidcAdapter implements Adapter {
  constructor(
    private readonly repo: OidcPayloadRepository,
    private readonly storeId: string,
    private readonly model: string,
    private readonly clock: Clock,
    private readonly clients: ClientLookup,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    if (this.model === 'Client') return;
    const expiresAt = typeof expiresIn === 'number' && expiresIn > 0 ? new Date(this.clock.now().getTime() + expiresIn * 1000) : null;
    await this.repo.upsert(this.storeId, this.model, id, payload as Record<string, unknown>, {
      grantId: typeof payload.grantId === 'string' ? payload.grantId : null,
      userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expiresAt,
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.model === 'Client') return this.clients(id);
    return this.payload(await this.repo.find(this.storeId, this.model, id, this.clock.now()));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.payload(await this.repo.findByUid(this.storeId, this.model, uid, this.clock.now()));
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.payload(await this.repo.findByUserCode(this.storeId, this.model, userCode, this.clock.now()));
  }

  async consume(id: string): Promise<void> {
    await this.repo.consume(this.storeId, this.model, id, this.clock.now());
  }

  async destroy(id: string): Promise<void> {
    await this.repo.destroy(this.storeId, this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.repo.revokeByGrantId(this.storeId, grantId);
  }

  private payload(stored: { payload: Record<string, unknown>; consumedAt: Date | null } | undefined): AdapterPayload | undefined {
    if (!stored) return undefined;
    return stored.consumedAt ? { ...stored.payload, consumed: Math.floor(stored.consumedAt.getTime() / 1000) } : stored.payload;
  }
}

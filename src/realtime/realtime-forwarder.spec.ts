import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../config/app-config.js';
import type { RealtimeChannelSettings } from '../config/realtime-settings.js';
import { RealtimeForwarder } from './realtime-forwarder.js';

const BASE = { appId: '1', key: 'k', secret: { env: 'S' }, cluster: 'eu' };

// The boot-time check of the forward rules; nothing is forwarded here, so the collaborators
// the check does not touch are absent.
function check(realtimeChannel: Partial<RealtimeChannelSettings>): () => void {
  const config = AppConfig.load({ env: { LOG_LEVEL: 'silent', S: 'secret' }, settings: { realtimeChannel: { ...BASE, ...realtimeChannel } as RealtimeChannelSettings } });
  const forwarder = new RealtimeForwarder(undefined as never, { onPublished: () => () => undefined } as never, undefined as never, config);
  return () => forwarder.onModuleInit();
}

const rule = (channel: string) => ({ topic: 'user.created', channel, event: 'user-created' });

describe('realtime forward rules at boot', () => {
  it('accept store-scoped channels of every kind', () => {
    for (const channel of ['{storeCodename}_news', 'private-{storeCodename}_admin-users', 'presence-{storeCodename}_lobby']) {
      expect(check({ forwardRules: [rule(channel)] })).not.toThrow();
    }
    expect(check({ forwardRules: [rule('private-encrypted-{storeCodename}_v')], encryptionMasterKeyBase64: Buffer.alloc(32, 1).toString('base64') })).not.toThrow();
  });

  it('refuse a channel every store would share, or with the store out of place', () => {
    expect(check({ forwardRules: [rule('private-users')] })).toThrow(/forwardRules\[0\]\.channel: .*events stay in their store/);
    expect(check({ forwardRules: [rule('private-users_{storeCodename}')] })).toThrow(/forwardRules\[0\]\.channel/);
  });

  it('refuse a channel that would pass 200 characters for a 40-character store', () => {
    expect(check({ forwardRules: [rule(`private-{storeCodename}_${'x'.repeat(150)}`)] })).not.toThrow();
    expect(check({ forwardRules: [rule(`private-{storeCodename}_${'x'.repeat(152)}`)] })).toThrow(/longer than 200 characters/);
  });

  it('refuse an encrypted channel without a master key', () => {
    expect(check({ forwardRules: [rule('private-encrypted-{storeCodename}_v')] })).toThrow(/needs encryptionMasterKeyBase64/);
  });
});

import { describe, expect, it } from '@jest/globals';
// The service's configuration: the platform's AppConfig over the service's own sections.
import { ServiceConfig as AppConfig } from '../../settings.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import type { RealtimeChannelSettings } from './realtime.settings.js';
import { RealtimeForwarder } from './realtime-forwarder.js';

const BASE = { appId: '1', key: 'k', secret: { env: 'S' }, cluster: 'eu' };

// The boot-time check of the forward rules; nothing is forwarded here, so the collaborators
// the check does not touch are absent.
function check(realtimeChannel: Partial<RealtimeChannelSettings>): () => void {
  const config = AppConfig.load({ env: { LOG_LEVEL: 'silent', S: 'secret' }, settings: { realtimeChannel: { ...BASE, ...realtimeChannel } as RealtimeChannelSettings } });
  const checks = new BootChecks();
  const forwarder = new RealtimeForwarder(undefined as never, { onPublished: () => () => undefined } as never, undefined as never, config, checks, { declare: () => undefined } as never);
  return () => {
    forwarder.onModuleInit();
    checks.assert();
  };
}

const rule = (channel: string) => ({ topic: 'user.created', channel, event: 'user-created' });

describe('realtime forward rules at boot', () => {
  it('accept the store\'s admin channel of every kind /realtime/auth signs', () => {
    for (const channel of ['private-{storeCodename}_admin', 'private-{storeCodename}_admin-users', 'presence-{storeCodename}_admin-lobby']) {
      expect(check({ forwardRules: [rule(channel)] })).not.toThrow();
    }
    expect(check({ forwardRules: [rule('private-encrypted-{storeCodename}_admin-v')], encryptionMasterKeyBase64: Buffer.alloc(32, 1).toString('base64') })).not.toThrow();
  });

  it('refuse a public channel, naming the rule', () => {
    expect(check({ forwardRules: [rule('private-{storeCodename}_admin'), rule('{storeCodename}_admin-users')] })).toThrow(
      /forwardRules\[1\]\.channel: "\{storeCodename\}_admin-users" is public, open to anyone holding the app key: forwarded events go to a private-, private-encrypted- or presence- channel/,
    );
  });

  it('refuse a channel every user of the store may join', () => {
    expect(check({ forwardRules: [rule('private-{storeCodename}_users')] })).toThrow(/forwardRules\[0\]\.channel: "private-\{storeCodename\}_users" is open to every user of the store: .*private-\{storeCodename\}_admin\[-<name>\]/);
    expect(check({ forwardRules: [rule('presence-{storeCodename}_lobby')] })).toThrow(/forwardRules\[0\]\.channel: .*open to every user of the store/);
  });

  it('refuse a channel every store would share, or with the store out of place', () => {
    expect(check({ forwardRules: [rule('private-users')] })).toThrow(/forwardRules\[0\]\.channel: .*events stay in their store/);
    expect(check({ forwardRules: [rule('private-users_{storeCodename}')] })).toThrow(/forwardRules\[0\]\.channel/);
  });

  it('refuse a channel that would pass 200 characters for a 40-character store', () => {
    expect(check({ forwardRules: [rule(`private-{storeCodename}_admin-${'x'.repeat(144)}`)] })).not.toThrow();
    expect(check({ forwardRules: [rule(`private-{storeCodename}_admin-${'x'.repeat(146)}`)] })).toThrow(/longer than 200 characters/);
  });

  it('refuse an encrypted channel without a master key', () => {
    expect(check({ forwardRules: [rule('private-encrypted-{storeCodename}_admin-v')] })).toThrow(/needs encryptionMasterKeyBase64/);
  });
});

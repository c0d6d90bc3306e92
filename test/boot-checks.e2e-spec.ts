import { describe, expect, it } from '@jest/globals';
import type { SettingsOverrides } from '../src/settings.js';
import { startApp } from './helpers.js';

// Three mistakes in three sections, each checked by another module (the event channel, the
// verification flows, machine tokens): one failed boot names all three.
describe('boot checks', () => {
  it('a settings file with three mistakes in three sections names all three in one ConfigError', async () => {
    const settings = {
      eventSubscriptions: [{ name: 'orders', description: '', transport: 'sse', topics: [], auth: { absoluteRoles: [], authScript: 'session.roleId ==' } }],
      emailVerificationRequiredForLogin: true,
      machineTokens: { services: [{ name: 'reports', publicKey: { env: 'UNSET_REPORTS_KEY_FOR_BOOT_CHECKS' } }], machineToMachineBlockList: [], allowedM2MClients: [] },
    } as SettingsOverrides;
    const boot = startApp({ settings });
    await expect(boot).rejects.toMatchObject({ name: 'ConfigError' });
    const { message } = (await boot.catch((e: unknown) => e)) as Error;
    expect(message).toContain('settings.eventSubscriptions "orders": authScript does not compile');
    expect(message).toContain('settings.emailVerificationRequiredForLogin: needs settings.verification.flows.email-verification.enabled');
    expect(message).toContain('settings.machineTokens.services: reports: the public key is not set');
  });

  it('a valid configuration boots', async () => {
    const t = await startApp();
    await t.close();
  });
});

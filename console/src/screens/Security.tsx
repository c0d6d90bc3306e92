import { api, must, STORE_HEADER } from '../api/client';
import type { ScreenProps } from '../nav';
import { ErrorText, Section, useLoad } from '../ui';
import { PasskeySetup, TotpSetup } from './Enrol';

// The signed-in administrator's own second factors: an authenticator app, passkeys.
export default function Security({ session }: ScreenProps) {
  const headers = { [STORE_HEADER]: session.store };
  const factors = useLoad(() => must(api.GET('/auth-api/mfa', { headers })), []);
  const f = factors.data;
  return (
    <>
      <h1>My security</h1>
      <Section title="Second factors">
        <ErrorText error={factors.error} />
        {f && (
          <p>
            Authenticator app: {f.totp ? 'on' : 'off'}. Passkeys: {f.passkeys}. Recovery codes left: {f.recoveryCodesLeft}.
          </p>
        )}
      </Section>
      {f && !f.totp && session.store === session.target && (
        <Section title="Authenticator app">
          <TotpSetup onDone={factors.reload} />
        </Section>
      )}
      {session.store === session.target && (
        <Section title="Passkeys">
          <PasskeySetup onDone={factors.reload} />
        </Section>
      )}
    </>
  );
}

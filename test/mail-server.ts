import { createServer, type AddressInfo } from 'node:net';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { ProviderSetting } from '../src/delivery/notification/notification.settings.js';

// A real SMTP server on 127.0.0.1 that records and parses what it receives, and the settings of
// an SMTP provider pointed at it.

export interface Received {
  rcptTo: string[];
  mail: ParsedMail;
}

export interface MailServer {
  port: number;
  received: Received[];
  // Messages whose envelope names `address`.
  to(address: string): Received[];
  close(): Promise<void>;
}

export async function startMailServer(opts: { rejectRecipients?: boolean } = {}): Promise<MailServer> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!opts.rejectRecipients) return callback();
      const error = new Error('mailbox unavailable') as Error & { responseCode: number };
      error.responseCode = 550;
      callback(error);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        simpleParser(Buffer.concat(chunks))
          .then((mail) => {
            received.push({ rcptTo: session.envelope.rcptTo.map((a) => a.address.toLowerCase()), mail });
            callback();
          })
          .catch(callback);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    to: (address) => received.filter((r) => r.rcptTo.includes(address.toLowerCase())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// A port nothing listens on: bound, then released.
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export function smtp(providerName: string, port: number): ProviderSetting {
  return {
    providerName,
    providerType: 'smtp',
    providerSettings: { host: '127.0.0.1', port, secure: false, from: 'Service <no-reply@example.test>', rejectUnauthorized: false },
  };
}

export function addressesOf(field: AddressObject | AddressObject[] | undefined): string[] {
  return (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));
}


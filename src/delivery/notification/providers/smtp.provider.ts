import nodemailer, { type Transporter } from 'nodemailer';
import { ProviderError, requiredSetting, setting, type EnvLookup, type NotificationProvider, type OutgoingMessage } from './provider.js';

// SMTP through nodemailer. providerSettings: host, port, secure, user, pass, from.
export class SmtpProvider implements NotificationProvider {
  readonly type = 'smtp' as const;
  private readonly transport: Transporter;
  private readonly from: string;

  constructor(
    readonly name: string,
    settings: Record<string, unknown>,
    env: EnvLookup,
  ) {
    const user = setting(settings, 'user', env, name);
    this.from = requiredSetting(settings, 'from', env, name);
    this.transport = nodemailer.createTransport({
      host: requiredSetting(settings, 'host', env, name),
      port: Number(setting(settings, 'port', env, name) ?? 587),
      secure: setting(settings, 'secure', env, name) === 'true',
      auth: user ? { user, pass: setting(settings, 'pass', env, name) } : undefined,
      // Loopback test servers have no certificate; real ones must.
      tls: { rejectUnauthorized: setting(settings, 'rejectUnauthorized', env, name) !== 'false' },
      connectionTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(message: OutgoingMessage): Promise<void> {
    try {
      await this.transport.sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject ?? '',
        html: message.body,
        // One Message-ID per notification: a repeated send is recognisable downstream.
        messageId: `<${message.notificationId}@notifications>`,
      });
    } catch (error) {
      const e = error as { responseCode?: number; message?: string };
      // 5xx from the server is final (bad mailbox, refused); connection trouble and 4xx are not.
      throw new ProviderError(e.message ?? 'SMTP failure', (e.responseCode ?? 0) >= 500);
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

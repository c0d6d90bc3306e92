import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../../kernel/errors.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { DomainEvents } from '../../kernel/domain-events.js';
import { Transactions } from '../../platform/database/transactions.js';
import type { ChannelName, TemplateSetting } from './notification.settings.js';
import type { PageRequest } from '../../kernel/paging.js';
import type { NotificationEntity } from './notification.entity.js';
import { NotificationQueue } from './notification-queue.js';
import { NotificationRepository } from './notification.repository.js';
import { TemplateService } from './template.service.js';
import { NotificationSection } from './notification.settings.js';

export interface SendRequest {
  storeId: string;
  channel: ChannelName;
  template: string;
  // A user of the store (the address comes from the user's record), or an explicit address.
  userId?: string;
  recipient?: string;
  contextVars?: Record<string, unknown>;
  // Codes and links: usable by the template, erased from the row once delivered or failed.
  secretVars?: Record<string, unknown>;
  acceptLanguage?: string;
  // Its id, when the caller may send the same notification twice (an event delivered again):
  // a second send of the same id does nothing.
  id?: string;
}

// Sending returns at once with the notification's id; a worker delivers it.
@Injectable()
export class NotificationService {
  private readonly channels: ReadonlySet<string>;

  constructor(
    private readonly notifications: NotificationRepository,
    private readonly queue: NotificationQueue,
    private readonly templates: TemplateService,
    private readonly events: DomainEvents,
    private readonly transactions: Transactions,
    config: AppConfig,
  ) {
    this.channels = new Set(config.section(NotificationSection).notifications.channels.map((c) => c.channelName));
  }

  hasChannel(channel: ChannelName): boolean {
    return this.channels.has(channel);
  }

  hasTemplate(name: string, channel: ChannelName): boolean {
    return this.templates.has(name, channel);
  }

  // Shipped templates of a feature; the settings' own templates of the same name, channel and
  // language win.
  addDefaultTemplates(templates: TemplateSetting[]): void {
    this.templates.addDefaults(templates);
  }

  // The in-app inbox of one user in one store.
  inbox(storeId: string, userId: string, page: PageRequest, unreadOnly: boolean): Promise<[NotificationEntity[], number]> {
    return this.notifications.inbox(storeId, userId, page, unreadOnly);
  }

  // Idempotent; 404 for anything that is not the caller's own in-app notification.
  async markRead(storeId: string, userId: string, id: string): Promise<NotificationEntity> {
    await this.notifications.markRead(storeId, userId, id);
    const item = await this.notifications.findInboxItem(storeId, userId, id);
    if (!item) throw new AppError('NotFound', 'no such notification');
    return item;
  }

  async send(request: SendRequest): Promise<string> {
    if (!this.channels.has(request.channel)) throw new AppError('ValidationFailed', `channel ${request.channel} is not configured`);
    if (!this.templates.has(request.template, request.channel)) throw new AppError('ValidationFailed', `no template ${request.template} for ${request.channel}`);
    if (!request.userId && !request.recipient) throw new AppError('ValidationFailed', 'a notification needs a user or a recipient address');
    if (request.channel === 'inApp' && !request.userId) throw new AppError('ValidationFailed', 'in-app notifications are for users');
    const id = request.id ?? randomUUID();
    // The row and its event in one transaction.
    const written = await this.transactions.run(async (tx) => {
      if (!(await this.notifications.insert(request.storeId, {
        id,
        userId: request.userId ?? null,
        channel: request.channel,
        template: request.template,
        recipient: request.recipient ?? null,
        contextVars: request.contextVars ?? {},
        secretVars: request.secretVars ?? null,
        acceptLanguage: request.acceptLanguage?.slice(0, 200) ?? null,
        status: 'queued',
        attempts: [],
        deliveredBy: null,
        deliveredAt: null,
        content: null,
        readAt: null,
      }, tx))) return false;
      await this.events.emit('notification.created', { notificationId: id, storeId: request.storeId, userId: request.userId ?? null, channel: request.channel, template: request.template }, tx);
      return true;
    });
    // A lost enqueue is recovered: queued rows are enqueued again when a worker starts.
    if (written) await this.queue.enqueue(id);
    return id;
  }
}

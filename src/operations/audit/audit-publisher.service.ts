import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { EventPublisher } from '../../delivery/broker/event-publisher.js';
import { auditTopic } from '../../delivery/broker/topics.js';
import { toAuditEntryResponse } from './audit.dto.js';
import type { AuditEntryEntity } from './audit.entity.js';

// The audit stream: each entry, once written (committed), on the broker for subscribers. A
// publication that fails is logged and not retried: the entry is in the log either way.
@Injectable()
export class AuditPublisherService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('AuditLog');
  }

  // `<service>-audit-<action with dots as dashes>`, with the store for the subscribers' filters.
  publish(rows: AuditEntryEntity[]): void {
    for (const row of rows) {
      const topic = auditTopic(this.publisher.service, row.action);
      this.publisher.publish(topic, { storeId: row.storeId, entry: toAuditEntryResponse(row) }).catch((err: unknown) => this.logger.warn({ err, topic }, 'audit event not published'));
    }
  }
}

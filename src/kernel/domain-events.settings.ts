import { Type } from 'class-transformer';
import { IsInt, Max, Min, ValidateNested } from 'class-validator';

// The domain events' outbox (docs/events.md#domain-events-and-the-outbox): how often each replica
// looks for events no one delivered, how long one taken for delivery stays with whoever took it,
// and how long delivered ones are kept.
export class DomainEventSettings {
  // Each replica's sweep for undelivered events (its first at boot).
  @IsInt()
  @Min(1)
  @Max(3600)
  sweepSeconds: number;

  // An event's writer delivers it at once; a sweep takes it only once its holder (the writer, or
  // the sweep that claimed it last) has had it this long, twice as long after each claim (up to 16 times as long).
  @IsInt()
  @Min(1)
  @Max(3600)
  leaseSeconds: number;

  // Delivered events stay this long, then go (hourly, on every replica).
  @IsInt()
  @Min(1)
  @Max(8760)
  retentionHours: number;
}

export class DomainEventSection {
  // Delivery of the domain events written in the changes' transactions (the outbox).
  @ValidateNested()
  @Type(() => DomainEventSettings)
  domainEvents: DomainEventSettings;
}

import { Type } from 'class-transformer';
import { IsBoolean, IsInt, Max, Min, ValidateNested } from 'class-validator';

export class AuditLogSettings {
  // Off: nothing is recorded (the routes still read what was).
  @IsBoolean()
  enabled: boolean;

  // Entries older than this are deleted by the hourly sweep.
  @IsInt()
  @Min(1)
  @Max(3650)
  retentionDays: number;
}

// The security audit log (docs/audit-log.md).
export class AuditLogSection {
  // The security audit trail (docs/audit-log.md).
  @ValidateNested()
  @Type(() => AuditLogSettings)
  auditLog: AuditLogSettings;
}

import { Type } from 'class-transformer';
import { Allow, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';

export class MachineServiceSetting {
  // The calling service's short name; its tokens carry issuer `<name>-service`.
  @Matches(/^[a-z][a-z0-9-]{0,62}$/, { message: 'name must be a lower-case service name' })
  name: string;

  // Its Ed25519 public key: PEM text, or { "env": "NAME" }.
  @Allow()
  publicKey: string | { env: string };

  // What its tokens may do where a route or object asks for a permission.
  @IsOptional()
  @IsString({ each: true })
  permissions?: string[];
}

export class MachineTokenSettings {
  @ValidateNested({ each: true })
  @Type(() => MachineServiceSetting)
  services: MachineServiceSetting[];

  // Enforced when NODE_ENV is staging or production.
  @IsString({ each: true })
  machineToMachineBlockList: string[];

  // When not empty (staging, production): only these services.
  @IsString({ each: true })
  allowedM2MClients: string[];
}

// The services whose machine tokens are accepted.
export class MachineTokenSection {
  @ValidateNested()
  @Type(() => MachineTokenSettings)
  machineTokens: MachineTokenSettings;
}

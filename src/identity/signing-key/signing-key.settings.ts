import { IsNumber, Max, Min } from 'class-validator';

// The signing keys' rotation.
export class SigningKeySection {
  // How long a signing key signs before a new one takes over.
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  @Max(3650)
  keyRefreshPeriodInDays: number;
}

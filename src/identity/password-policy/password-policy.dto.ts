import { ApiProperty } from '@nestjs/swagger';
import type { PasswordRules } from './password-policy.service.js';

// The rules a sign-up or password form shows and checks before sending.
export class PasswordPolicyResponse {
  @ApiProperty({ type: 'integer', example: 8, description: 'Fewest characters (shorter: 400 WeakPassword).' }) minLength: number;
  @ApiProperty({ type: 'integer', example: 72, description: 'Most UTF-8 bytes (longer: 400 WeakPassword).' }) maxBytes: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 4, example: 2, description: 'Lowest zxcvbn score accepted (lower: 400 PasswordTooWeak); 0: no strength check.' }) minScore: number;
  @ApiProperty({ description: 'Whether passwords known from data breaches are refused (400 PasswordBreached).' }) rejectBreached: boolean;
  @ApiProperty({ description: "Whether the user's email, mobile, names and store name count as guessable words (pass them as zxcvbn's user inputs for the same score)." }) userInputs: boolean;
}

export function toPasswordPolicyResponse(rules: PasswordRules): PasswordPolicyResponse {
  return { minLength: rules.minLength, maxBytes: rules.maxBytes, minScore: rules.minScore, rejectBreached: rules.rejectBreached, userInputs: rules.userInputs };
}

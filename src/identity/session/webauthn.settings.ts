import { ArrayNotEmpty, IsArray, IsString, Matches } from 'class-validator';

// Passkeys (WebAuthn): the relying party and the origins its ceremonies may come from.
export class WebAuthnSettings {
  // The domain passkeys are bound to (the web origins' registrable domain or one of its parents).
  @IsString()
  @Matches(/^[a-z0-9.-]{1,253}$/, { message: 'rpId must be a domain name (no scheme, port or path)' })
  rpId: string;

  @IsString()
  @Matches(/^.{1,100}$/, { message: 'rpName must be 1 to 100 characters' })
  rpName: string;

  // Web origins (https://app.example.com) and app origins (android:apk-key-hash:...).
  @IsArray()
  @ArrayNotEmpty({ message: 'origins must list at least one origin' })
  @IsString({ each: true })
  origins: string[];
}

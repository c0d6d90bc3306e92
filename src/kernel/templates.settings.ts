import { Allow, IsIn, IsOptional, IsString, Matches } from 'class-validator';

// The notification channels and a template's shape: vocabulary the notification feature and the
// extensions' catalogue (extensions.ts) share.
export const CHANNEL_NAMES = ['email', 'sms', 'push', 'whatsapp', 'inApp'] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];

const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/;

export class TemplateSetting {
  @Matches(NAME, { message: 'templateName must be an identifier' })
  templateName: string;

  @IsIn(CHANNEL_NAMES)
  channel: ChannelName;

  // BCP 47 primary tag or tag with region: en, en-GB, tr.
  @Matches(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, { message: 'language must be a language tag such as en or en-GB' })
  language: string;

  @IsOptional()
  @IsString()
  subject?: string;

  // Handlebars text; for push an object `{ title, body, data }` of Handlebars strings.
  @Allow()
  body: string | { title: string; body: string; data?: Record<string, string> };
}

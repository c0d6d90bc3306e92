import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

export const ACCESS_LEVELS = ['accessPublic', 'accessProtected', 'accessPrivate'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];
export const EVENT_TRANSPORTS = ['websocket', 'sse'] as const;

// A subscription's name is a path segment (`/events/<name>`).
const NAME = /^[A-Za-z0-9_-]{1,100}$/;
// A topic's name is what clients subscribe with (`store.created`): anything but the SSE query's
// separator (a comma), white space and control characters.
const TOPIC_NAME = /^[^,\s\p{Cc}]{1,100}$/u;

// Who may see events of a data object (SPEC "Event subscription channel").
export class DataObjectAccessSetting {
  @Matches(/^[A-Za-z][A-Za-z0-9]{0,62}$/, { message: 'name must be a data object name (letters, digits)' })
  name: string;

  @IsIn(ACCESS_LEVELS)
  accessLevel: AccessLevel;

  // Whether its events carry `_owner`: a private object without it is for admins only.
  @IsBoolean()
  hasOwnerField = true;
}

export class EventTopicSetting {
  // The client-facing name.
  @Matches(TOPIC_NAME, { message: 'name must be 1-100 characters other than commas, white space and control characters' })
  name: string;

  @Matches(/^[A-Za-z][A-Za-z0-9]{0,62}$/, { message: 'dataObjectName must be a data object name' })
  dataObjectName: string;

  // A broker topic or an alias (`user.created`, `user_updated`, `<api>:done`, `dbEvent:user:created`).
  @IsString()
  @MaxLength(200)
  topic: string;

  @IsString()
  description = '';

  @IsOptional()
  @IsIn(ACCESS_LEVELS)
  forceAccessLevel?: AccessLevel;

  // CEL over `data` producing the delivered payload.
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  payloadMapping?: string;

  @IsOptional()
  @IsString({ each: true })
  excludeFields?: string[];
}

export class EventAuthSetting {
  @IsString({ each: true })
  absoluteRoles: string[] = [];

  // Empty or absent: nobody is turned away by role.
  @IsOptional()
  @IsString({ each: true })
  checkRoles?: string[];

  // CEL over `session`, `topicName`, `dataObjectName`: false rejects the topic.
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  authScript?: string;

  // CEL over the same and `data`: false skips the event for this subscriber.
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  filterScript?: string;
}

export class EventSubscriptionSetting {
  @Matches(NAME, { message: 'name must be 1-100 letters, digits, _ or -' })
  name: string;

  @IsString()
  description = '';

  @IsIn(EVENT_TRANSPORTS)
  transport: (typeof EVENT_TRANSPORTS)[number];

  @ValidateNested({ each: true })
  @Type(() => EventTopicSetting)
  @ArrayUnique((t: EventTopicSetting) => t.name, { message: 'topic names must be unique in a subscription' })
  @ArrayMaxSize(500)
  topics: EventTopicSetting[];

  @ValidateNested()
  @Type(() => EventAuthSetting)
  auth: EventAuthSetting;
}


import { Type } from 'class-transformer';
import { IsBoolean, Matches, ValidateNested } from 'class-validator';

// The admin console (docs/console.md): a single-page app built into dist/console and served by
// the service itself at `path`.
export class ConsoleSettings {
  // Off: nothing is served at `path` (the API answers its own 404).
  @IsBoolean()
  enabled: boolean;

  // Where it is served: one or more path segments, no trailing slash, never under the API's own
  // prefixes. The build (console/vite.config.ts) uses `/console` as its base: another path needs
  // the console rebuilt with CONSOLE_BASE set to it.
  @Matches(/^(\/[A-Za-z0-9._-]+)+$/, { message: 'console.path must look like /console (segments, no trailing slash)' })
  path: string;
}

export class ConsoleSection {
  // The admin console served at `path` (console-settings.ts, docs/console.md).
  @ValidateNested()
  @Type(() => ConsoleSettings)
  console: ConsoleSettings;
}

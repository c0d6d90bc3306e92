import 'reflect-metadata'; // class-validator and class-transformer read decorator metadata
import { readFileSync } from 'node:fs';
import { projectPath } from './project-path.js';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NODE_ENVS = ['development', 'test', 'staging', 'production'] as const;

const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : Number(value);
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
const toBoolean = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : value === 'true' ? true : value === 'false' ? false : value);

// Every environment variable the service reads. `process.env` is read here and nowhere else.
export class EnvVars {
  @IsIn(NODE_ENVS)
  NODE_ENV: (typeof NODE_ENVS)[number] = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  // Absolute base address used in links the service hands out (avatars); relative paths without it.
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'PUBLIC_URL must be an http(s) URL' })
  PUBLIC_URL?: string;

  // The client application's address: social login lands on `{FRONTEND_URL}/auth/callback`.
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'FRONTEND_URL must be an http(s) URL' })
  FRONTEND_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  @Matches(/^[a-z][a-z0-9-]{0,30}$/, { message: 'PROJECT_CODENAME must be lower-case letters, digits and dashes' })
  PROJECT_CODENAME = 'svc';

  @Matches(/^[a-z][a-z0-9-]{0,30}$/, { message: 'SERVICE_CODENAME must be lower-case letters, digits and dashes' })
  SERVICE_CODENAME = 'auth';

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  SUPER_ADMIN_IDENTIFIER?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  SUPER_ADMIN_PASSWORD?: string;

  // Path of the service settings file (JSON); the shipped defaults apply to every key it omits.
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  SERVICE_SETTINGS?: string;

  @Transform(toInt)
  @IsInt()
  @Min(4)
  @Max(15)
  BCRYPT_COST = 12;

  // Password hashes (and checks) waiting for or on the thread pool; above it, 503 at once
  // rather than a queue that makes every login wait.
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  BCRYPT_MAX_PENDING = 32;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  @IsString()
  APP_VERSION: string = packageVersion();

  // Encrypts the private signing keys stored in the database (AES-256-GCM).
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'KEY_ENCRYPTION_SECRET must be at least 16 characters' })
  KEY_ENCRYPTION_SECRET?: string;

  // Earlier values of KEY_ENCRYPTION_SECRET, newest first, separated by commas, during a rotation
  // (docs/operations.md): what they sealed still opens and is sealed again under the current
  // one; the audit log's chain verifies the entries keyed under them.
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[^,]{16,}(,[^,]{16,})*$/, { message: 'KEY_ENCRYPTION_SECRET_PREVIOUS must be earlier KEY_ENCRYPTION_SECRET values of 16 characters or more, separated by commas' })
  KEY_ENCRYPTION_SECRET_PREVIOUS?: string;

  // Access-token cookie: `Secure` (default on in production) and `Domain`.
  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean()
  COOKIE_SECURE?: boolean;

  // The OpenAPI page at /docs: on by default, off in production unless this turns it on.
  @Transform(toBoolean)
  @IsOptional()
  @IsBoolean()
  DOCS_ENABLED?: boolean;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^\.?[a-z0-9.-]+$/i, { message: 'COOKIE_DOMAIN must be a host name' })
  COOKIE_DOMAIN?: string;

  // GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` when set.
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  METRICS_TOKEN?: string;

  // When set, /metrics is served on this port only (bound to METRICS_HOST), not on PORT.
  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT?: number;

  @IsString()
  METRICS_HOST = '127.0.0.1';

  // Express `trust proxy`: how client IPs are read behind a load balancer (rate limits use them).
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  TRUST_PROXY?: string;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export function loadEnv(source: Record<string, string | undefined>): EnvVars {
  const known = Object.fromEntries(
    Object.keys(new EnvVars()).concat(optionalKeys).filter((k) => source[k] !== undefined).map((k) => [k, source[k]]),
  );
  const env = plainToInstance(EnvVars, known, { exposeDefaultValues: true });
  const errors = validateSync(env, { skipMissingProperties: false });
  const problems = errors.map((e) => `${e.property}=${SECRET_VARIABLES.has(e.property) ? '(not shown)' : JSON.stringify(e.value)}: ${Object.values(e.constraints ?? {}).join('; ')}`);
  const previous = env.KEY_ENCRYPTION_SECRET_PREVIOUS?.split(',') ?? [];
  if (previous.length && (!env.KEY_ENCRYPTION_SECRET || previous.includes(env.KEY_ENCRYPTION_SECRET))) {
    problems.push('KEY_ENCRYPTION_SECRET_PREVIOUS names the secrets KEY_ENCRYPTION_SECRET replaced: set a new, different KEY_ENCRYPTION_SECRET beside it');
  }
  if (problems.length) throw new ConfigError(problems);
  return env;
}

// Values a refused boot does not print: the message goes to logs.
const SECRET_VARIABLES = new Set(['KEY_ENCRYPTION_SECRET', 'KEY_ENCRYPTION_SECRET_PREVIOUS', 'SUPER_ADMIN_PASSWORD', 'METRICS_TOKEN', 'DATABASE_URL', 'REDIS_URL']);

// Optional keys have no default, so they are not own properties of a fresh EnvVars.
const optionalKeys = [
  'PUBLIC_URL', 'FRONTEND_URL', 'DATABASE_URL', 'REDIS_URL', 'SUPER_ADMIN_IDENTIFIER', 'SUPER_ADMIN_PASSWORD', 'SERVICE_SETTINGS', 'TRUST_PROXY',
  'KEY_ENCRYPTION_SECRET', 'KEY_ENCRYPTION_SECRET_PREVIOUS', 'COOKIE_SECURE', 'COOKIE_DOMAIN', 'METRICS_TOKEN', 'METRICS_PORT', 'DOCS_ENABLED',
];

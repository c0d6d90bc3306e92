// A secret written in place (discouraged) or `{ "env": "NAME" }`, read from the environment at boot.
export type SecretSetting = string | { env: string };

// `{ "env": NAME }` read now; a missing value is reported with where it was asked for.
export function resolveSecret(value: SecretSetting | undefined, path: string, env: (name: string) => string | undefined, problems: string[]): string | undefined {
  if (value === undefined || value === null) {
    problems.push(`${path} is required`);
    return undefined;
  }
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || typeof value.env !== 'string') {
    problems.push(`${path} must be a string or { "env": "NAME" }`);
    return undefined;
  }
  const secret = env(value.env);
  if (!secret) problems.push(`${path}: environment variable ${value.env} is not set`);
  return secret || undefined;
}

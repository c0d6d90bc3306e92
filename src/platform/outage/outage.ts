// Errors that mean PostgreSQL or Redis cannot be reached right now, as opposed to a fault in
// the request or the code: the client should retry later (503), and nothing needs fixing.

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// SQLSTATE class 08 (connection exception), 57P01-57P03 (shutting down, cannot connect now),
// 53300 (too many connections).
const POSTGRES_UNAVAILABLE = /^(08...|57P0[123]|53300)$/;
const UNAVAILABLE_MESSAGES = [
  'Connection terminated', // pg: the server went away mid-query
  'timeout exceeded when trying to connect', // pg pool
  'Client has encountered a connection error',
  'Connection is closed', // ioredis
  "Stream isn't writeable", // ioredis without offline queue
  'Command timed out', // ioredis commandTimeout
];

export const OUTAGE_RETRY_AFTER_S = 5;

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
  driverError?: unknown;
}

// Duck-typed, not instanceof: errors from Node's sockets may come from another realm.
export function isDependencyOutage(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const e = error as ErrorLike;
  if (e.name === 'MaxRetriesPerRequestError') return true; // ioredis gave up on a command
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || POSTGRES_UNAVAILABLE.test(e.code))) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((m) => (e.message as string).includes(m))) return true;
  // TypeORM wraps the driver's error; Node wraps one refusal per address in an AggregateError.
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDependencyOutage(inner, depth + 1))) return true;
  return isDependencyOutage(e.driverError, depth + 1) || isDependencyOutage(e.cause, depth + 1);
}

/** What a database error was, whether the driver threw it or drizzle wrapped it (as `cause`). */

interface DriverError {
  code?: string;
  message?: string;
}

function driverError(err: unknown): DriverError {
  const e = (err ?? {}) as DriverError & { cause?: DriverError };
  return e.code !== undefined ? e : (e.cause ?? e);
}

/** The SQLSTATE of a driver error. */
export function errorCode(err: unknown): string | undefined {
  return driverError(err).code;
}

/**
 * A unique violation: 23505, or on Citus the same violation in a shard's COPY (an INSERT … SELECT
 * is sent to the shards as COPY), which the coordinator reports as XX000 with the shard's message.
 */
export function isUniqueViolation(err: unknown): boolean {
  const e = driverError(err);
  return e.code === "23505" || (e.code === "XX000" && /^duplicate key value violates unique constraint/.test(e.message ?? ""));
}

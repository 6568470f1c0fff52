/**
 * Domain errors thrown by services. The tRPC layer maps them to HTTP statuses, so services stay
 * independent of the transport.
 */
export type ServiceErrorCode = "NOT_FOUND" | "FORBIDDEN" | "CONFLICT" | "BAD_REQUEST" | "PRECONDITION_FAILED";

export class ServiceError extends Error {
  constructor(
    public readonly code: ServiceErrorCode,
    message: string,
    /** Field path the error is about, when there is one ("settings.nudgeLevel"). */
    public readonly field?: string,
  ) {
    super(message);
    this.name = "ServiceError";
  }
}

export const notFound = (what: string) => new ServiceError("NOT_FOUND", `${what} not found`);
export const badRequest = (message: string, field?: string) => new ServiceError("BAD_REQUEST", message, field);
export const conflict = (message: string, field?: string) => new ServiceError("CONFLICT", message, field);
export const forbidden = (message: string) => new ServiceError("FORBIDDEN", message);

/** A 400 about several fields at once: `issues` become the error's `data.issues` (server/http/error-issues.ts). */
export class FieldIssuesError extends ServiceError {
  constructor(public readonly issues: { path: (string | number)[]; message: string; code?: string }[]) {
    super(
      "BAD_REQUEST",
      issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; "),
      issues[0]?.path.join(".") || undefined,
    );
    this.name = "FieldIssuesError";
  }
}

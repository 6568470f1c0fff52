/**
 * The digest a page's error carries when the database could not be reached (server/dashboard/access.ts
 * sets it; Next keeps a thrown error's own digest), so the error boundary shows "database
 * unavailable" rather than a generic failure or the sign-in page.
 */
export const DATABASE_UNAVAILABLE_DIGEST = "VIGIL_DATABASE_UNAVAILABLE";

/** Thrown by a page (Server Component) that could not reach the database. */
export class DatabaseUnavailablePageError extends Error {
  readonly digest = DATABASE_UNAVAILABLE_DIGEST;
  constructor(cause?: unknown) {
    super("Database unavailable", { cause });
  }
}

/**
 * The API key of a request, taken from the in-memory cache, was revoked: seen by the re-check in
 * guard.check's read or in a batch's first round trip. The caller answers 401 and drops the key
 * from its cache.
 */
export class ApiKeyRevokedError extends Error {
  constructor() {
    super("Invalid or revoked API key");
    this.name = "ApiKeyRevokedError";
  }
}

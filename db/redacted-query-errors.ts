/**
 * A failed query's error names its statement but not its values. drizzle's DrizzleQueryError puts
 * every parameter in its message ("Failed query: … params: …") and on itself, and PGlite puts them
 * on the driver error it wraps; whatever logs the error (a route's failure, tRPC's internal-error
 * log, better-auth's logger) then writes session tokens, key hashes and users' data to the log.
 *
 * Installed once per copy of drizzle-orm (db/client.ts imports this): the values stay readable on
 * the error (`params`, not enumerable) for code that inspects it, but are in neither the message,
 * the stack nor what console.error / util.inspect print.
 */
import { DrizzleQueryError } from "drizzle-orm";

const INSTALLED = Symbol.for("vigil.redactedQueryErrors");
/** Where drivers put a statement's values on their errors (PGlite: params; postgres-js: parameters). */
const VALUE_FIELDS = ["params", "parameters"] as const;

function hideValues(target: object): void {
  for (const field of VALUE_FIELDS) {
    const own = Object.getOwnPropertyDescriptor(target, field);
    if (own?.enumerable) Object.defineProperty(target, field, { ...own, enumerable: false });
  }
}

function installQueryErrorRedaction(): void {
  const proto = DrizzleQueryError.prototype as unknown as Record<PropertyKey, unknown>;
  if (proto[INSTALLED]) return;
  Object.defineProperty(proto, INSTALLED, { value: true });
  // The constructor assigns query, then params, then cause: setters here see each in turn.
  Object.defineProperty(proto, "params", {
    configurable: true,
    get: () => undefined,
    set(this: Error & { query?: string }, params: unknown) {
      Object.defineProperty(this, "params", { value: params, enumerable: false, writable: true, configurable: true });
      const count = Array.isArray(params) ? params.length : 0;
      // Before the constructor captures the stack, whose first line is the message.
      this.message = `Failed query: ${this.query}${count ? `\nparams: ${count} value${count === 1 ? "" : "s"} (not logged)` : ""}`;
    },
  });
  Object.defineProperty(proto, "cause", {
    configurable: true,
    get: () => undefined,
    set(this: Error, cause: unknown) {
      if (cause && typeof cause === "object") hideValues(cause);
      Object.defineProperty(this, "cause", { value: cause, enumerable: false, writable: true, configurable: true });
    },
  });
}

installQueryErrorRedaction();

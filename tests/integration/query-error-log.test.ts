/**
 * A failed query's error, as a log prints it (message, stack, util.inspect with its cause), names
 * the statement but none of its values: a session token or key hash in a failed query's
 * parameters never reaches the log (issue 61 item 4). On PGlite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { inspect } from "node:util";
import { randomBytes } from "node:crypto";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { installation } from "@/db/schema";

describe.each(DATABASE_KINDS)("failed-query errors on %s", (kind) => {
  const app = useTestApp(kind);

  it("keep the query's values out of the message, the stack and what console.error prints", async () => {
    const key = `dup-${randomBytes(4).toString("hex")}`;
    const secret = `secret-${randomBytes(16).toString("hex")}`;
    await app.db.insert(installation).values({ key, value: "first" });
    const err = await app.db
      .insert(installation)
      .values({ key, value: secret })
      .then(() => null, (e: unknown) => e as Error & { params?: unknown[] });
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain("Failed query: insert into \"installation\"");
    for (const printed of [err!.message, err!.stack ?? "", inspect(err, { depth: 10 }), String(err)]) expect(printed).not.toContain(secret);
    // Still there for code that inspects the error.
    expect(err!.params).toContain(secret);
  });
});

/**
 * A PostgreSQL server that is not there fails fast and is recognised as "unavailable" (→ 503 +
 * Retry-After), while ordinary SQL errors stay errors (→ 500). The full outage against the built app
 * (server stopped and started under a running instance) is in scripts/hardening/crash-trials.ts.
 */
import net from "node:net";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase } from "@/db/client";
import { isDatabaseUnavailable } from "@/server/http/database-unavailable";
import { createTestDatabase } from "../support/databases";

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

describe("database unavailable", () => {
  it("a query against a server that is down fails within 2 s and counts as unavailable", async () => {
    const database = await openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres` });
    const t0 = Date.now();
    const err = await database.db.execute(sql`select 1`).then(() => null, (e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err).toBeTruthy();
    expect(isDatabaseUnavailable(err)).toBe(true);
    await database.close();
  });

  it("an SQL error on a live server is not an outage", async () => {
    const database = await createTestDatabase("postgres");
    const err = await database.db.execute(sql`select * from no_such_table`).then(() => null, (e: unknown) => e);
    expect(err).toBeTruthy();
    expect(isDatabaseUnavailable(err)).toBe(false);
    await database.close();
  });
});

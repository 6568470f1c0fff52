/**
 * A key over its rate limit gets 429, and the refusals are told: the first of each minute is
 * written to the workspace's audit log (`api_key.throttled`), never one row per refusal.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { handleTrpcRequest } from "@/server/agent-api/trpc";
import { apiKeyRateLimitPerMinute } from "@/server/services/rate-limit";

describe.each(DATABASE_KINDS)("throttled agent keys on %s", (kind) => {
  const previous = process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
  const app = useTestApp(kind);
  let seeded: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  beforeAll(async () => {
    seeded = await app.seedWorkspace({ scope: "agent" });
  });
  afterEach(() => {
    if (previous === undefined) delete process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
    else process.env.VIGIL_RATE_LIMIT_PER_MINUTE = previous;
  });

  const check = (i: number) =>
    handleTrpcRequest(
      new Request("http://localhost/api/trpc/guard.check", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${seeded.key}` },
        body: JSON.stringify({ id: `g${i}`, sessionId: "throttled-s", callId: `c${i}`, toolName: "Read", args: { file_path: `/repo/${i}.ts` } }),
      }),
      app.runtime,
    );

  it("by default a fleet on one key is not throttled: the limit is above one instance's capacity", () => {
    delete process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
    expect(apiKeyRateLimitPerMinute()).toBeGreaterThanOrEqual(300_000);
  });

  it("over the limit: 429s, and one audit row for the minute however many were refused", async () => {
    process.env.VIGIL_RATE_LIMIT_PER_MINUTE = "2";
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await check(i)).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429]);
    // The audit row is written without holding the refused request.
    let rows: { action: string; target: string; after: { limitPerMinute: number } }[] = [];
    for (let attempt = 0; attempt < 50 && rows.length === 0; attempt++) {
      await new Promise((r) => setTimeout(r, 20));
      const res = (await app.db.execute(
        sql`select action, target, after from audit_log where workspace_id = ${seeded.workspaceId} and action = 'api_key.throttled'`,
      )) as unknown;
      rows = (Array.isArray(res) ? res : (res as { rows: typeof rows }).rows) as typeof rows;
    }
    expect(rows).toHaveLength(1);
    expect(rows[0].after.limitPerMinute).toBe(2);
    expect(seeded.key.startsWith(rows[0].target)).toBe(true);
  });
});

/**
 * A person's change of a trust state (a state set by hand, a reset) is written by one function
 * (server/services/key-state-writer.ts): the row's state, counters, escalation end and manual mark
 * are those of its trust document, whether the row is updated or created.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { keyState } from "@/db/schema";

describe.each(DATABASE_KINDS)("key_state rows written by a person's change on %s", (kind) => {
  const app = useTestApp(kind);

  const row = async (workspaceId: string, failureKey: string) => {
    const [r] = await app.db.select().from(keyState).where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, failureKey)));
    return r;
  };
  /** The columns that mirror the trust document, side by side with it. */
  const mirror = (r: typeof keyState.$inferSelect) => ({
    columns: { state: r.state, consecutiveFailures: r.consecutiveFailures, escalationExpires: r.escalationExpires?.getTime() ?? null, manual: r.manual },
    trust: { state: r.trust.state, consecutiveFailures: r.trust.consecutiveFailures, escalationExpires: r.trust.escalationExpires, manual: r.trust.manual != null },
  });

  it("keys.setState (an existing key and a new tool-level state) and keys.reset leave the row's columns as its trust document", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const session = uid("s");
    const url = "https://api.example.com/v1/users";
    const out = await ingestAccepted(app, key, [1, 2, 3].map(() => result(session, "http_request", { url }, { success: false, httpStatus: 503, error: "upstream down" })));
    const failureKey = out.effects.find((e: any) => e.type === "escalated").failureKey as string;

    expect((await app.mutation("keys.setState", { failureKey, state: "blocked", reason: "by hand" }, { key })).status).toBe(200);
    const blocked = await row(workspaceId, failureKey);
    expect(blocked).toMatchObject({ state: "blocked", effectiveState: "blocked", manual: true });
    expect(blocked.consecutiveFailures).toBeGreaterThan(0);
    expect(mirror(blocked).columns).toEqual(mirror(blocked).trust);

    expect((await app.mutation("keys.setState", { failureKey: "@tool:probe_tool", state: "escalated", reason: "by hand" }, { key })).status).toBe(200);
    const created = await row(workspaceId, "@tool:probe_tool");
    expect(created).toMatchObject({ level: "tool", toolName: "probe_tool", state: "escalated", effectiveState: "escalated", manual: true });
    expect(mirror(created).columns).toEqual(mirror(created).trust);

    expect((await app.mutation("keys.reset", { failureKey }, { key })).status).toBe(200);
    const reset = await row(workspaceId, failureKey);
    expect(reset).toMatchObject({ state: "trusted", effectiveState: "trusted", manual: false, consecutiveFailures: 0, effectiveFailures: 0, escalationExpires: null });
    expect(mirror(reset).columns).toEqual(mirror(reset).trust);
  });
});

/**
 * Key states stored by earlier engines are carried on. A database written before migration 0011
 * (the KeyState inside `key_state.data`, one `{ts, failed, seq}` record per result) is migrated in
 * place: the state moves to `trust`, the results stay in `data`, the failures become `key_failure`
 * rows (migration 0017), the next result is counted with the old ones, and the key's next batch
 * writes the result log as `key_result_chunk` rows. A history with absolute result times (before
 * they were stored as gaps) reads the same way.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { keyFailure, keyResultChunk, keyState } from "@/db/schema";
import { migrateDatabase } from "@/db/client";
import { BUILTIN_RULE } from "@/server/engine/rules";
import { emptyTimeline } from "@/server/engine/decay";
import { extractFailureKey } from "@/server/engine/failure-key";
import { applyOutcome } from "@/server/engine/trust";
import { newKeyContext } from "@/server/engine/key-state";
import { upgradeKeyContext } from "@/server/engine/key-history";

const kinds = DATABASE_KINDS.filter((k) => k !== "citus");

/** The engine's context of a key after success, success, failure under a 50 % rate rule (4 results needed). */
function successSuccessFailure(args: { url: string }) {
  const failureKey = extractFailureKey("http_request", args).failureKey;
  const rule = { ...BUILTIN_RULE, countThreshold: 100, rateThreshold: 0.5, rateMinCalls: 4 };
  const t0 = Date.now() - 60_000;
  let ctx = newKeyContext(failureKey, "http_request");
  for (const [i, failed] of [false, false, true].entries()) {
    ctx = applyOutcome(ctx, { failed, severity: failed ? "server_error" : undefined, sessionId: "old" }, rule, "auto", emptyTimeline(), t0 + i * 1000).ctx;
  }
  return { failureKey, ctx };
}

describe.each(kinds)("key_state stored by earlier versions on %s", (kind) => {
  const app = useTestApp(kind, { migratedUpTo: "0010_tool_lock_and_key_rollups" });

  const resultChunkRows = (workspaceId: string, failureKey: string) =>
    app.db.select({ chunk: keyResultChunk.chunk, log: keyResultChunk.log }).from(keyResultChunk).where(and(eq(keyResultChunk.workspaceId, workspaceId), eq(keyResultChunk.failureKey, failureKey))).orderBy(keyResultChunk.chunk);
  const failureRows = (workspaceId: string, failureKey: string) =>
    app.db.select({ seq: keyFailure.seq, record: keyFailure.record }).from(keyFailure).where(and(eq(keyFailure.workspaceId, workspaceId), eq(keyFailure.failureKey, failureKey))).orderBy(keyFailure.seq);

  it("moves the state to `trust`, the failures to `key_failure`, keeps the results in `data`, and counts the next result with the old ones", async () => {
    const ws = await app.seedWorkspace();
    const args = { url: "https://rated.example.com/v1/items/1" };
    const { failureKey, ctx } = successSuccessFailure(args);
    // Stored as that engine stored it: the whole context in `data`, one record per result.
    expect(ctx.state.state).toBe("trusted");
    const legacy = { state: ctx.state, failures: ctx.failures, results: ctx.results.ts.map((ts, i) => ({ ts, failed: i === 2, seq: i + 1 })) };
    await app.db.execute(sql`
      insert into key_state (workspace_id, failure_key, tool_name, level, state, effective_state, total_calls, total_failures, data)
      values (${ws.workspaceId}, ${failureKey}, 'http_request', 'key', 'trusted', 'trusted', 3, 1, ${JSON.stringify(legacy)}::jsonb)`);

    await migrateDatabase(app.database);
    const where = and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.failureKey, failureKey));
    const [migrated] = await app.db.select({ trust: keyState.trust, data: keyState.data }).from(keyState).where(where);
    expect(migrated.trust).toEqual(ctx.state);
    expect(migrated.data).toEqual({ results: legacy.results });
    expect(await failureRows(ws.workspaceId, failureKey)).toEqual(ctx.failures.map((f) => ({ seq: f.seq, record: f })));

    const put = await app.mutation("config.put", { default_rule: { count_threshold: 100, rate_threshold: 0.5, rate_min_calls: 4 } }, { key: ws.key });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const res = await app.mutation("ingest.events", { events: [result(uid("s"), "http_request", args, { success: false, error: "503 Service Unavailable", httpStatus: 503 })] }, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // 2 failures in 4 results: the rule's 50 %.
    const [after] = await app.db.select({ state: keyState.state, trust: keyState.trust, data: keyState.data }).from(keyState).where(where);
    expect(after.state).toBe("escalated");
    expect(after.trust).toMatchObject({ state: "escalated", escalationReason: "50% failure rate", totalCalls: 4, seq: 4 });
    // Written back in today's form: where the log begins in `data`, the times as gaps in a chunk.
    expect(after.data).toEqual({ resultsFrom: 1 });
    const chunks = await resultChunkRows(ws.workspaceId, failureKey);
    expect(chunks).toEqual([{ chunk: 0, log: { firstSeq: 1, gaps: [ctx.results.ts[0], 1000, 1000, expect.any(Number)] } }]);
    expect(upgradeKeyContext(after.trust, after.data, [], chunks.map((c) => c.log)).results.ts.slice(0, 3)).toEqual(ctx.results.ts);
    expect((await failureRows(ws.workspaceId, failureKey)).map((f) => f.seq)).toEqual([3, 4]);
  });

  it("reads a history stored with absolute result times (an earlier stored form) and counts its results", async () => {
    await migrateDatabase(app.database); // the latest schema, whichever test ran first
    const ws = await app.seedWorkspace();
    const args = { url: "https://rated-abs.example.com/v1/items/1" };
    const { failureKey, ctx } = successSuccessFailure(args);
    await app.db.execute(sql`
      insert into key_state (workspace_id, failure_key, tool_name, level, state, effective_state, total_calls, total_failures, trust, data)
      values (${ws.workspaceId}, ${failureKey}, 'http_request', 'key', 'trusted', 'trusted', 3, 1, ${JSON.stringify(ctx.state)}::jsonb,
              ${JSON.stringify({ results: ctx.results })}::jsonb)`);
    await app.db.insert(keyFailure).values(ctx.failures.map((f) => ({ workspaceId: ws.workspaceId, failureKey, seq: f.seq, record: f })));
    const put = await app.mutation("config.put", { default_rule: { count_threshold: 100, rate_threshold: 0.5, rate_min_calls: 4 } }, { key: ws.key });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const res = await app.mutation("ingest.events", { events: [result(uid("s"), "http_request", args, { success: false, error: "503 Service Unavailable", httpStatus: 503 })] }, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [after] = await app.db.select({ trust: keyState.trust, data: keyState.data }).from(keyState).where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.failureKey, failureKey)));
    expect(after.trust).toMatchObject({ state: "escalated", escalationReason: "50% failure rate", seq: 4 });
    const chunks = await resultChunkRows(ws.workspaceId, failureKey);
    expect(upgradeKeyContext(after.trust, after.data, [], chunks.map((c) => c.log)).results.ts.slice(0, 3)).toEqual(ctx.results.ts);
    expect((await failureRows(ws.workspaceId, failureKey)).map((f) => f.seq)).toEqual([3, 4]);
  });
});

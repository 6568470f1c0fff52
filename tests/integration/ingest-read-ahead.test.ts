/**
 * A batch's stored calls and model profiles are read in its first round trip, for keys planned
 * under the cached configuration before the claims are known (server/ingest/apply.ts, readAhead).
 * What that guess cannot know — a result whose call came in an earlier batch, a call re-sent as a
 * duplicate, a configuration edited since it was cached — is read or planned again afterwards:
 * these tests pin each case to what an agent sees.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { at, uid } from "../support/agent";
import { event } from "@/db/schema";
import { extractFailureKey } from "@/server/engine/failure-key";
import { mergeEffectiveConfig } from "@/server/engine/config";

describe.each(DATABASE_KINDS)("ingest read-ahead on %s", (kind) => {
  const app = useTestApp(kind);
  const ingest = (key: string, events: unknown[]) => ingestAccepted(app, key, events);
  const keyOf = async (workspaceId: string, id: string) =>
    (await app.db.select({ k: event.failureKey }).from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.id, id))))[0]?.k;

  const url = "https://api.example.com/v1/orders";
  const base = Date.now() - 60 * 60_000;
  const callOf = (sessionId: string, callId: string, m: number) => ({ type: "tool.call", id: uid(), sessionId, callId, toolName: "http_request", args: { url }, ts: at(base, m) });
  const resultOf = (sessionId: string, callId: string, m: number, outcome: Record<string, unknown>, args?: Record<string, unknown>) => ({
    type: "tool.result", id: uid(), sessionId, callId, toolName: "http_request", ...(args ? { args } : {}), ...outcome, ts: at(base, m),
  });

  /** A model that handled the url's key well (3 of 3) and one that failed it twice; answers the key. */
  async function twoModels(key: string) {
    const good = uid("s");
    const bad = uid("s");
    await ingest(key, [
      { type: "session.start", id: uid(), sessionId: good, agent: "a", model: "good-model", ts: at(base, 0) },
      ...[1, 2, 3].map((m) => resultOf(good, uid("c"), m, { success: true }, { url })),
    ]);
    const answer = await ingest(key, [
      { type: "session.start", id: uid(), sessionId: bad, agent: "a", model: "bad-model", ts: at(base, 0) },
      ...[1, 2].map((m) => resultOf(bad, uid("c"), m, { success: false, httpStatus: 500 }, { url })),
    ]);
    expect(answer.accepted).toBe(3);
    return { bad, failureKey: extractFailureKey("http_request", { url }, { domain: null, service: null }, []).failureKey };
  }

  it("a result without args whose call an earlier batch stored gets the call's key and that key's model profiles", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const { bad, failureKey } = await twoModels(key);
    const callId = uid("c");
    await ingest(key, [callOf(bad, callId, 4)]);
    // The result alone: planned ahead under its own name (no args, no call in the batch), then
    // again once its stored call is read; the key's profiles are read then.
    const failed = resultOf(bad, callId, 5, { success: false, httpStatus: 500 });
    const answer = await ingest(key, [failed]);
    expect(await keyOf(workspaceId, failed.id)).toBe(failureKey);
    // The third failure of bad-model on the key, beside good-model's 3 of 3: a switch is suggested.
    expect(answer.effects).toContainEqual(expect.objectContaining({ type: "model_suggestion", failureKey, suggestedModel: "good-model" }));
  });

  it("a call re-sent with its first result: the result is keyed by the stored call, not by the duplicate left out", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const { bad, failureKey } = await twoModels(key);
    const call = callOf(bad, uid("c"), 4);
    await ingest(key, [call]);
    const failed = resultOf(bad, call.callId, 5, { success: false, httpStatus: 500 });
    const answer = await ingest(key, [call, failed]);
    expect(answer).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(await keyOf(workspaceId, failed.id)).toBe(failureKey);
    expect(answer.effects).toContainEqual(expect.objectContaining({ type: "model_suggestion", failureKey, suggestedModel: "good-model" }));
  });

  it("a configuration edited after it was cached: the next batch is keyed under the new one", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const args = { tenant: "acme", query: "open orders" };
    const first = resultOf(s, uid("c"), 1, { success: true }, args);
    // The configuration is cached by this batch; the edit below changes its fingerprint.
    await ingest(key, [{ ...first, toolName: "crm_lookup" }]);
    const document = { extractors: [{ tool: "crm_lookup", kind: "path", field: "tenant" }] };
    expect((await app.mutation("config.put", document, { key })).status).toBe(200);
    const second = { ...resultOf(s, uid("c"), 2, { success: false, error: "timeout" }, args), toolName: "crm_lookup" };
    await ingest(key, [second]);

    const under = (doc: object) => extractFailureKey("crm_lookup", args, { domain: null, service: null }, mergeEffectiveConfig(doc as never, {}).extractors).failureKey;
    expect(under(document)).not.toBe(under({}));
    expect(await keyOf(workspaceId, first.id)).toBe(under({}));
    expect(await keyOf(workspaceId, second.id)).toBe(under(document));
  });
});

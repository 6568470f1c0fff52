/**
 * One effective-state rule for ingest, approvals and resets, and thresholds of the rule in force
 * (issue 15): approving a domain-level recovery frees the keys under it; after a rule edit every
 * key shows the new threshold in reliability.status, Tools, Overview and key detail.
 */
import { describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { at, result, uid } from "../support/agent";
import { listKeys } from "@/server/dashboard/tools";
import { getTopFailingKeys } from "@/server/dashboard/overview";
import { getKeyDetail } from "@/server/dashboard/key-detail";

describe.each(DATABASE_KINDS)("effective state and rules in force on %s", (kind) => {
  const app = useTestApp(kind);

  const ingest = (key: string, events: unknown[]) => app.mutation("ingest.events", { events }, { key });
  const status = async (key: string) => (await app.query("reliability.status", {}, { key })).body.result!.data.keys as any[];

  it("approving a domain-level recovery makes every key under the domain effectively trusted", async () => {
    const { key } = await app.seedWorkspace();
    const put = await app.mutation(
      "config.put",
      {
        domain_rules: { atlassian: { count_threshold: 2, escalation_duration_seconds: 60, cooldown_seconds: 60, success_count_to_recover: 2, severity_filter: ["timeout", "server_error"] } },
        settings: { recovery_mode: "ask" },
      },
      { key },
    );
    expect(put.status).toBe(200);
    const s = uid("s");
    const base = Date.now() - 30 * 60_000;
    const r = await ingest(key, [
      result(s, "mcp_atlassian_search", { query: "bug" }, { success: false, error: "Request timed out after 30s" }, { ts: at(base, 0) }),
      result(s, "mcp_atlassian_get_issue", { id: "X-1" }, { success: false, error: "deadline exceeded" }, { ts: at(base, 1) }),
      ...[5, 6, 7, 8].map((m) => result(s, "mcp_atlassian_search", { query: "ok" }, { success: true }, { ts: at(base, m) })),
    ]);
    expect(r.status).toBe(200);
    const pendingEffect = r.body.result!.data.effects.find((e: any) => e.type === "recovery_pending" && e.failureKey === "@domain:atlassian");
    expect(pendingEffect, JSON.stringify(r.body.result!.data.effects.map((e: any) => [e.type, e.failureKey]))).toBeTruthy();
    const before = await status(key);
    const underDomain = before.filter((k) => k.failureKey.startsWith("mcp_atlassian_"));
    expect(underDomain.length).toBe(2);
    expect(underDomain.every((k) => k.effectiveState !== "trusted")).toBe(true);

    const resolved = await app.mutation("approvals.resolve", { approvalId: pendingEffect.approvalId, decision: "approve", comment: "fixed upstream" }, { key });
    expect(resolved.status).toBe(200);
    const after = await status(key);
    expect(after.find((k) => k.failureKey === "@domain:atlassian")).toMatchObject({ state: "trusted", effectiveState: "trusted" });
    expect(after.filter((k) => k.failureKey.startsWith("mcp_atlassian_")).map((k) => [k.failureKey, k.effectiveState])).toEqual(
      underDomain.map((k) => [k.failureKey, "trusted"]),
    );
    const g = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "mcp_atlassian_search", args: { query: "again" } }, { key });
    expect(g.body.result!.data).toMatchObject({ decision: "allow", state: "trusted" });
  });

  it("after a threshold edit, status, Tools, Overview and key detail show the new threshold for every key", async () => {
    const ws = await app.seedWorkspace();
    const { key, workspaceId } = ws;
    expect((await app.mutation("config.put", { default_rule: { count_threshold: 5 }, domain_rules: { "api.example.com": { count_threshold: 4 } } }, { key })).status).toBe(200);
    const s = uid("s");
    await ingest(key, [
      result(s, "read_file", { path: "/a" }, { success: false, error: "ENOENT" }),
      result(s, "bash", { command: "make test" }, { success: false, error: "exit 2" }),
      result(s, "http_request", { url: "https://api.example.com/v1/x" }, { success: false, httpStatus: 503 }),
    ]);
    const first = await status(key);
    expect(first.length).toBeGreaterThanOrEqual(3);
    const expected = (k: any, plain: number, domain: number) => (k.failureKey.includes("api.example.com") ? domain : plain);
    expect(first.map((k) => [k.failureKey, k.threshold])).toEqual(first.map((k) => [k.failureKey, expected(k, 5, 4)]));

    expect((await app.mutation("config.put", { default_rule: { count_threshold: 3 }, domain_rules: { "api.example.com": { count_threshold: 2 } } }, { key })).status).toBe(200);
    const now = await status(key);
    expect(now.map((k) => [k.failureKey, k.threshold])).toEqual(now.map((k) => [k.failureKey, expected(k, 3, 2)]));
    const tools = await listKeys(app.db, workspaceId, { pageSize: 200 });
    expect(tools.rows.map((k) => [k.failureKey, k.threshold])).toEqual(
      expect.arrayContaining(now.map((k) => [k.failureKey, expected(k, 3, 2)])),
    );
    const top = await getTopFailingKeys(app.db, workspaceId, 20);
    expect(top.length).toBeGreaterThanOrEqual(3);
    expect(top.every((k) => k.threshold === expected(k, 3, 2))).toBe(true);
    const detail = await getKeyDetail(app.db, workspaceId, now.find((k) => k.toolName === "read_file")!.failureKey);
    expect(detail!.key!.threshold).toBe(3);
  });
});

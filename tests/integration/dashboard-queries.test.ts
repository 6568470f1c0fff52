/**
 * Dashboard read queries (server/dashboard/*) and the `ws.*` dashboard procedures, against real
 * databases, with traffic posted through the agent API the way agents post it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { at, result, uid } from "../support/agent";
import { member, modelSuggestion } from "@/db/schema";
import { recentSuggestions } from "@/server/dashboard/patterns-data";
import { listPendingApprovals, listResolvedApprovals, countPendingApprovals } from "@/server/dashboard/approvals";
import { listOrgWorkspacesWithStats, listWorkspaceAudit } from "@/server/dashboard/audit";
import { countKeyStates } from "@/server/dashboard/key-counts";
import { getFailureFilterOptions, listFailures, NO_MODEL, resolveTimeRange } from "@/server/dashboard/failures";
import { getKeyDetail } from "@/server/dashboard/key-detail";
import { getFailureRateSeries, getLiveCounts, getPausedSessions, getTopFailingKeys, hasAnyEvents } from "@/server/dashboard/overview";
import { countKeysByState, listKeys } from "@/server/dashboard/tools";
import { diffJson } from "@/components/dashboard/json-diff";

const VARLOG = "readFile|path_prefix=/var/log";
const STRIPE = "http_request|domain=api.stripe.com|path_prefix=v1";

describe.each(DATABASE_KINDS)("dashboard queries on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let other: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let ownerCookie: string;
  const now = Date.now();

  const app = useTestApp(kind);
  beforeAll(async () => {
    const owner = await app.signUp(`dash-owner-${uid()}@example.com`);
    ownerCookie = owner.cookie;
    ws = await app.seedWorkspace({ ownerUserId: owner.userId });
    other = await app.seedWorkspace();
    const put = await app.mutation("config.put", { settings: { recovery_mode: "ask" }, domain_rules: { "api.github.com": { count_threshold: 2 } } }, { key: ws.key });
    expect(put.status).toBe(200);

    const base = now - 4 * 3600_000;
    const s = uid("s");
    const fail = (tool: string, args: Record<string, unknown>, min: number, extra: Record<string, unknown> = {}) =>
      result(s, tool, args, { success: false, error: "HTTP 500 upstream", httpStatus: 500, ...extra }, { ts: at(base, min), model: "gpt-4o" });
    const ok = (tool: string, args: Record<string, unknown>, min: number) => result(s, tool, args, { success: true }, { ts: at(base, min), model: "claude-sonnet-4" });
    const events = [
      { type: "session.start", id: uid(), sessionId: s, agent: "dash", model: "gpt-4o", ts: at(base, 0) },
      // /var/log: escalates, then 3 successes after expiry + cooldown → pending approval (ask mode).
      fail("readFile", { path: "/var/log/syslog" }, 1, { error: "I/O error" }),
      fail("readFile", { path: "/var/log/syslog" }, 2, { error: "I/O error" }),
      fail("readFile", { path: "/var/log/syslog" }, 3, { error: "I/O error" }),
      ok("readFile", { path: "/var/log/syslog" }, 100),
      ok("readFile", { path: "/var/log/syslog" }, 101),
      ok("readFile", { path: "/var/log/syslog" }, 102),
      // github: domain-level state across two keys.
      fail("http_request", { url: "https://api.github.com/repos/a" }, 200),
      fail("http_request", { url: "https://api.github.com/orgs/b" }, 201),
      // stripe: escalated.
      fail("http_request", { url: "https://api.stripe.com/v1/charges" }, 230, { httpStatus: 502 }),
      fail("http_request", { url: "https://api.stripe.com/v1/charges" }, 231, { httpStatus: 503 }),
      fail("http_request", { url: "https://api.stripe.com/v1/charges" }, 232, { httpStatus: 502 }),
      // plenty of trusted keys
      ...Array.from({ length: 12 }, (_, i) => ok("readFile", { path: `/src/m${i}/index.ts` }, 233)),
    ];
    const res = await app.mutation("ingest.events", { events }, { key: ws.key });
    expect(res.status).toBe(200);
    // Noise in another workspace that must never show up.
    const s2 = uid("s");
    await app.mutation(
      "ingest.events",
      { events: [1, 2, 3, 4].map((m) => result(s2, "readFile", { path: "/var/log/x" }, { success: false, error: "boom" }, { ts: at(base, m) })) },
      { key: other.key },
    );
  });

  it("live counts, chart series and top keys reflect the workspace only", async () => {
    const live = await getLiveCounts(app.db, ws.workspaceId, new Date(now));
    expect(live.totalKeys).toBeGreaterThanOrEqual(16);
    expect(live.keys.escalated).toBeGreaterThanOrEqual(3); // stripe + both github keys (domain)
    expect(live.keys.recovering).toBe(1);
    expect(live.levelAlerts).toBeGreaterThanOrEqual(1); // @domain:api.github.com
    expect(live.pendingApprovals).toBe(1);
    expect(live.failures24h).toBe(8);
    expect(live.lastEventAt).not.toBeNull();
    expect(live.keys.trusted + live.keys.recovering + live.keys.escalated + live.keys.blocked).toBe(live.totalKeys);

    const series = await getFailureRateSeries(app.db, ws.workspaceId, 14, new Date(now));
    expect(series).toHaveLength(14);
    const totals = series.reduce((a, p) => ({ results: a.results + p.results, failures: a.failures + p.failures }), { results: 0, failures: 0 });
    expect(totals).toEqual({ results: 23, failures: 8 });

    const top = await getTopFailingKeys(app.db, ws.workspaceId, 3);
    expect(top.map((t) => t.effectiveState)).not.toContain("trusted");
    expect(top.map((t) => t.failureKey)).toContain(STRIPE);

    expect(await hasAnyEvents(app.db, ws.workspaceId)).toBe(true);
    const empty = await app.seedWorkspace();
    expect(await hasAnyEvents(app.db, empty.workspaceId)).toBe(false);
    expect((await getLiveCounts(app.db, empty.workspaceId)).totalKeys).toBe(0);
    expect(await getPausedSessions(app.db, ws.workspaceId)).toEqual([]);
  });

  it("one count per state: Overview's totals equal the Tools filter's; top keys are the worst first", async () => {
    const live = await getLiveCounts(app.db, ws.workspaceId, new Date(now));
    const byState = await countKeysByState(app.db, ws.workspaceId);
    const all = await listKeys(app.db, ws.workspaceId, { pageSize: 200 });
    expect(live.keys).toEqual({ trusted: 0, recovering: 0, escalated: 0, blocked: 0, ...byState });
    expect(live.totalKeys).toBe(all.total);
    for (const state of ["trusted", "recovering", "escalated", "blocked"] as const) {
      expect((await listKeys(app.db, ws.workspaceId, { state })).total).toBe(live.keys[state]);
    }

    const top = await getTopFailingKeys(app.db, ws.workspaceId, 20);
    const failures = top.map((t) => t.totalFailures);
    expect(failures).toEqual([...failures].sort((a, b) => b - a));
    // Failures rank, not state: the 3-failure keys come before the escalated 1-failure github keys.
    expect(top[0].totalFailures).toBe(3);
    expect(top.findIndex((k) => k.failureKey === VARLOG)).toBeLessThan(top.findIndex((k) => k.failureKey.includes("api.github.com")));
  });

  it("models: one switch suggestion per (key, current model, suggested model), with its session count", async () => {
    const t = new Date(now);
    const row = (sessionId: string, suggestedModel: string, minutesAgo: number) => ({
      workspaceId: ws.workspaceId,
      sessionId,
      failureKey: STRIPE,
      currentModel: "gpt-4o",
      suggestedModel,
      strategy: "suggest",
      currentSuccessRate: 0.2,
      suggestedSuccessRate: 0.9,
      ts: new Date(t.getTime() - minutesAgo * 60_000),
    });
    await app.db.insert(modelSuggestion).values([row("s-a", "claude-sonnet-4", 30), row("s-b", "claude-sonnet-4", 20), row("s-c", "claude-sonnet-4", 10), row("s-d", "o3", 5)]);
    const list = await recentSuggestions(app.db, ws.workspaceId);
    expect(list.map((s) => [s.suggestedModel, s.sessionId, s.sessions])).toEqual([
      ["o3", "s-d", 1],
      ["claude-sonnet-4", "s-c", 3],
    ]);
    expect(await recentSuggestions(app.db, other.workspaceId)).toEqual([]);
  });

  it("tools: filter by state / level / text, sort and paginate", async () => {
    const byState = await countKeysByState(app.db, ws.workspaceId);
    expect(byState.recovering).toBe(1);

    const escalated = await listKeys(app.db, ws.workspaceId, { state: "escalated" });
    expect(escalated.rows.every((r) => r.effectiveState === "escalated")).toBe(true);
    expect(escalated.total).toBe(escalated.rows.length);

    const domain = await listKeys(app.db, ws.workspaceId, { level: "domain" });
    expect(domain.rows.map((r) => r.failureKey)).toEqual(["@domain:api.github.com"]);

    const gh = await listKeys(app.db, ws.workspaceId, { q: "github", level: "key" });
    expect(gh.total).toBe(2);
    for (const r of gh.rows) {
      expect(r.state).toBe("trusted"); // own state
      expect(r.effectiveState).toBe("escalated"); // via the domain
    }
    // LIKE wildcards are literal
    expect((await listKeys(app.db, ws.workspaceId, { q: "%" })).total).toBe(0);

    const recovering = (await listKeys(app.db, ws.workspaceId, { state: "recovering" })).rows[0];
    expect(recovering.failureKey).toBe(VARLOG);
    expect(recovering.recovery).toEqual({ successes: 3, needed: 3 });
    expect(recovering.approvalPending).toBe(true);

    const stripe = (await listKeys(app.db, ws.workspaceId, { q: "stripe" })).rows[0];
    expect(stripe).toMatchObject({ effectiveState: "escalated", threshold: 3, consecutiveFailures: 3, totalFailures: 3 });
    expect(stripe.escalationExpires).not.toBeNull();
    expect(stripe.escalationReason).toMatch(/3 failures/);

    // Sorted by state: strictest first; pages do not overlap and cover everything.
    const all = await listKeys(app.db, ws.workspaceId, { sort: "state", dir: "desc", pageSize: 1000 });
    const rank = { blocked: 3, escalated: 2, recovering: 1, trusted: 0 } as Record<string, number>;
    const ranks = all.rows.map((r) => rank[r.effectiveState]);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    const p1 = await listKeys(app.db, ws.workspaceId, { sort: "key", dir: "asc", page: 1, pageSize: 5 });
    const p2 = await listKeys(app.db, ws.workspaceId, { sort: "key", dir: "asc", page: 2, pageSize: 5 });
    expect(p1.total).toBe(all.total);
    expect(p1.rows).toHaveLength(5);
    expect(p1.rows[4].failureKey < p2.rows[0].failureKey).toBe(true);
    const byLast = await listKeys(app.db, ws.workspaceId, { sort: "last_failure", dir: "desc", pageSize: 1000 });
    expect(byLast.rows[0].lastFailureAt).not.toBeNull();
    expect(byLast.rows.at(-1)!.lastFailureAt).toBeNull(); // nulls last

    // Another workspace's keys never show up.
    expect((await listKeys(app.db, ws.workspaceId, { q: "/var/log/x" })).total).toBe(0);
  });

  it("key detail: state, level states, timeline and per-model rates", async () => {
    const d = await getKeyDetail(app.db, ws.workspaceId, VARLOG);
    expect(d).not.toBeNull();
    expect(d!.key!.state).toBe("recovering");
    expect(d!.transitions.map((t) => `${t.fromState}>${t.toState}`)).toEqual(["escalated>recovering", "trusted>escalated"]);
    expect(d!.pendingApprovalId).not.toBeNull();
    const models = Object.fromEntries(d!.models.map((m) => [m.model, m]));
    expect(models["gpt-4o"]).toMatchObject({ attempts: 3, failures: 3, successRate: 0 });
    expect(models["claude-sonnet-4"]).toMatchObject({ attempts: 3, failures: 0, successRate: 1 });

    const gh = (await listKeys(app.db, ws.workspaceId, { q: "github", level: "key" })).rows[0];
    const ghd = await getKeyDetail(app.db, ws.workspaceId, gh.failureKey);
    expect(ghd!.levels.map((l) => l.failureKey)).toContain("@domain:api.github.com");

    expect(await getKeyDetail(app.db, ws.workspaceId, "nope|x=y")).toBeNull();
    expect(await getKeyDetail(app.db, other.workspaceId, STRIPE)).toBeNull();
  });

  it("failures: filters by tool, severity, model, key and time; paginated newest first", async () => {
    const all = await listFailures(app.db, ws.workspaceId, { pageSize: 3 });
    expect(all.total).toBe(8);
    expect(all.rows).toHaveLength(3);
    expect(all.rows[0].ts >= all.rows[1].ts).toBe(true);
    const page3 = await listFailures(app.db, ws.workspaceId, { pageSize: 3, page: 3 });
    expect(page3.rows).toHaveLength(2);

    expect((await listFailures(app.db, ws.workspaceId, { tool: "http_request" })).total).toBe(5);
    expect((await listFailures(app.db, ws.workspaceId, { failureKey: STRIPE })).total).toBe(3);
    expect((await listFailures(app.db, ws.workspaceId, { model: "gpt-4o" })).total).toBe(8);
    expect((await listFailures(app.db, ws.workspaceId, { model: NO_MODEL })).total).toBe(0);
    const sev = (await listFailures(app.db, ws.workspaceId, { pageSize: 100 })).rows[0].severity;
    const bySev = await listFailures(app.db, ws.workspaceId, { severity: sev, pageSize: 100 });
    expect(bySev.rows.every((r) => r.severity === sev)).toBe(true);

    const lastHour = resolveTimeRange("1h", undefined, undefined, new Date(now));
    expect(lastHour.range).toBe("1h");
    const recent = await listFailures(app.db, ws.workspaceId, { from: lastHour.from });
    expect(recent.rows.every((r) => new Date(r.ts).getTime() >= now - 3600_000)).toBe(true);
    const custom = resolveTimeRange(undefined, new Date(now - 4 * 3600_000).toISOString(), new Date(now - 3 * 3600_000).toISOString());
    expect(custom.range).toBe("custom");
    expect((await listFailures(app.db, ws.workspaceId, { from: custom.from, to: custom.to })).total).toBe(3);
    expect(resolveTimeRange("bogus").range).toBe("all");

    const opts = await getFailureFilterOptions(app.db, ws.workspaceId);
    expect(opts.tools).toEqual(["http_request", "readFile"]);
    expect(opts.models).toEqual(expect.arrayContaining(["gpt-4o"]));
  });

  it("approvals: pending with history; ws procedures enforce roles; resolve and reset land in history and audit", async () => {
    const pending = await listPendingApprovals(app.db, ws.workspaceId);
    expect(pending.count).toBe(1);
    const a = pending.approvals[0];
    expect(a.failureKey).toBe(VARLOG);
    expect(a.history.failures).toHaveLength(3);
    expect(a.history.transitions.length).toBeGreaterThanOrEqual(2);
    expect(a.history.recovery).toEqual({ successes: 3, needed: 3 });
    expect(await countPendingApprovals(app.db, other.workspaceId)).toBe(0);

    // A viewer reads but cannot act.
    const viewer = await app.signUp(`dash-viewer-${uid()}@example.com`);
    await app.db.insert(member).values({ organizationId: ws.organizationId, userId: viewer.userId, role: "viewer" });
    const vPending = await app.query("ws.approvals.pending", { workspaceSlug: ws.slug }, { cookie: viewer.cookie });
    expect(vPending.status).toBe(200);
    expect(vPending.body.result!.data.count).toBe(1);
    expect((await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId: a.id, decision: "approve" }, { cookie: viewer.cookie })).status).toBe(403);
    expect((await app.mutation("ws.keys.reset", { workspaceSlug: ws.slug, all: true }, { cookie: viewer.cookie })).status).toBe(403);
    expect((await app.query("ws.overview.live", { workspaceSlug: ws.slug }, { cookie: viewer.cookie })).status).toBe(200);
    // Not a member at all: 404; no session: 401.
    const stranger = await app.signUp(`dash-stranger-${uid()}@example.com`);
    expect((await app.query("ws.overview.live", { workspaceSlug: ws.slug }, { cookie: stranger.cookie })).status).toBe(404);
    expect((await app.query("ws.overview.live", { workspaceSlug: ws.slug })).status).toBe(401);
    // Bad input is a 400 naming the field.
    const bad = await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId: a.id, decision: "maybe" }, { cookie: ownerCookie });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.message).toMatch(/decision/);

    // The owner approves with a comment.
    const ok = await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId: a.id, decision: "approve", comment: "disk replaced" }, { cookie: ownerCookie });
    expect(ok.status).toBe(200);
    expect((await listPendingApprovals(app.db, ws.workspaceId)).count).toBe(0);
    const resolved = await listResolvedApprovals(app.db, ws.workspaceId);
    expect(resolved.total).toBeGreaterThanOrEqual(1);
    expect(resolved.rows[0]).toMatchObject({ failureKey: VARLOG, status: "approved", comment: "disk replaced" });
    expect(resolved.rows[0].resolvedBy).toMatch(/dash-owner/);

    // Reset one key, then everything.
    const one = await app.mutation("ws.keys.reset", { workspaceSlug: ws.slug, failureKey: STRIPE }, { cookie: ownerCookie });
    expect(one.status).toBe(200);
    expect(one.body.result!.data.reset).toEqual([STRIPE]);
    const stripe = (await listKeys(app.db, ws.workspaceId, { q: "stripe" })).rows[0];
    expect(stripe.effectiveState).toBe("trusted");
    expect((await app.mutation("ws.keys.reset", { workspaceSlug: ws.slug, failureKey: "" }, { cookie: ownerCookie })).status).toBe(400);
    const everything = await app.mutation("ws.keys.reset", { workspaceSlug: ws.slug, all: true }, { cookie: ownerCookie });
    expect(everything.status).toBe(200);
    const live = await getLiveCounts(app.db, ws.workspaceId);
    expect(live.keys.escalated + live.keys.blocked + live.keys.recovering).toBe(0);

    const audit = await listWorkspaceAudit(app.db, ws.workspaceId, { pageSize: 100 });
    const actions = audit.rows.map((r) => r.action);
    expect(actions.length).toBe(audit.total);
    expect(audit.rows.some((r) => r.actorType === "user" && /dash-owner/.test(r.actorLabel))).toBe(true);
    expect(actions.some((x) => /approv|resolve/.test(x))).toBe(true);
    expect(actions.some((x) => /reset/.test(x))).toBe(true);
    const onlyApi = await listWorkspaceAudit(app.db, ws.workspaceId, { actorType: "api_key" });
    expect(onlyApi.rows.every((r) => r.actorType === "api_key")).toBe(true);
    const prefix = actions[0].split(".")[0];
    const filtered = await listWorkspaceAudit(app.db, ws.workspaceId, { action: prefix, organizationId: ws.organizationId });
    expect(filtered.rows.every((r) => r.action.startsWith(prefix))).toBe(true);
    expect((await listWorkspaceAudit(app.db, other.workspaceId, { pageSize: 100 })).rows.some((r) => /dash-owner/.test(r.actorLabel))).toBe(false);

    const orgWs = await listOrgWorkspacesWithStats(app.db, ws.organizationId);
    expect(orgWs.map((w) => w.slug)).toEqual([ws.slug]);
    expect(orgWs[0].keys).toBeGreaterThanOrEqual(16);
    // The same counts as Overview and Tools (key-counts.ts), level states included.
    const counts = await countKeyStates(app.db, ws.workspaceId);
    expect(orgWs[0]).toMatchObject({ keys: counts.total, alerts: counts.total - counts.byState.trusted });
  });

  it("stays fast at volume: 10k keys and 100k failures, filtered and paginated", async () => {
    const big = await app.seedWorkspace();
    const w = big.workspaceId;
    await app.db.execute(sql`
      insert into key_state (workspace_id, failure_key, tool_name, level, state, effective_state, effective_failures, threshold,
                             consecutive_failures, total_calls, total_failures, last_failure_at, trust, data)
      select ${w}, 'tool' || (g % 50) || '|args_hash=' || lpad(to_hex(g), 8, '0'), 'tool' || (g % 50), 'key',
             (array['trusted','trusted','trusted','escalated','recovering','blocked'])[1 + g % 6],
             (array['trusted','trusted','trusted','escalated','recovering','blocked'])[1 + g % 6],
             (g % 4)::float8, 3, g % 3, 100, g % 40, now() - (g || ' minutes')::interval,
             jsonb_build_object('state', (array['trusted','trusted','trusted','escalated','recovering','blocked'])[1 + g % 6],
                                'escalationReason', null, 'recoverySuccesses', 1, 'recoveryNeeded', 3, 'approvalPending', false),
             '{"failures": [], "results": {"firstSeq": 1, "ts": []}}'::jsonb
      from generate_series(1, 10000) g`);
    await app.db.execute(sql`
      insert into failure (workspace_id, event_id, failure_key, tool_name, severity, weight, ts, session_id, agent, model, error_message)
      select ${w}, 'ev' || g, 'tool' || (g % 50) || '|args_hash=' || lpad(to_hex(g % 10000), 8, '0'), 'tool' || (g % 50),
             (array['server_error','timeout','not_found','permission'])[1 + g % 4], 1, now() - (g || ' seconds')::interval,
             's' || (g % 300), 'default', (array['gpt-4o','claude-sonnet-4', null])[1 + g % 3], 'boom ' || g
      from generate_series(1, 100000) g`);
    // The roll-up ingest keeps beside the failure rows (unfiltered totals read it).
    await app.db.execute(sql`
      insert into daily_key_total (workspace_id, day, failure_key, tool_name, failures, last_failure_at)
      select workspace_id, to_char(ts at time zone 'UTC', 'YYYY-MM-DD'), failure_key, max(tool_name), count(*)::int, max(ts)
      from failure where workspace_id = ${w} group by 1, 2, 3`);
    await app.db.execute(sql`analyze key_state`);
    await app.db.execute(sql`analyze failure`);

    const time = async <T>(f: () => Promise<T>) => {
      const t0 = performance.now();
      const r = await f();
      return { r, ms: performance.now() - t0 };
    };
    const keysDeep = await time(() => listKeys(app.db, w, { sort: "last_failure", dir: "desc", page: 150, pageSize: 50 }));
    expect(keysDeep.r.total).toBe(10000);
    expect(keysDeep.r.rows).toHaveLength(50);
    const keysFiltered = await time(() => listKeys(app.db, w, { state: "blocked", q: "tool7|", sort: "failures", dir: "desc" }));
    expect(keysFiltered.r.rows.every((r) => r.effectiveState === "blocked" && r.failureKey.startsWith("tool7|"))).toBe(true);
    const failuresFirst = await time(() => listFailures(app.db, w, { page: 1, pageSize: 50 }));
    expect(failuresFirst.r.total).toBe(100000);
    const failuresFiltered = await time(() => listFailures(app.db, w, { tool: "tool7", severity: "timeout", model: "gpt-4o", from: new Date(Date.now() - 86_400_000), page: 3 }));
    expect(failuresFiltered.r.rows.every((r) => r.toolName === "tool7" && r.severity === "timeout" && r.model === "gpt-4o")).toBe(true);
    const live = await time(() => getLiveCounts(app.db, w));
    expect(live.r.totalKeys).toBe(10000);
    // Generous bounds (shared CI machines); typical timings are a few tens of ms.
    for (const t of [keysDeep, keysFiltered, failuresFirst, failuresFiltered, live]) expect(t.ms).toBeLessThan(3000);
    console.log(`[${kind}] keys deep page ${keysDeep.ms.toFixed(0)}ms, keys filtered ${keysFiltered.ms.toFixed(0)}ms, failures p1 ${failuresFirst.ms.toFixed(0)}ms, failures filtered ${failuresFiltered.ms.toFixed(0)}ms, live ${live.ms.toFixed(0)}ms`);
  });

  it("json diff lists changed, added and removed fields", () => {
    expect(diffJson({ role: "viewer", a: 1 }, { role: "admin", b: 2 })).toEqual([
      { key: "a", kind: "removed", before: 1 },
      { key: "b", kind: "added", after: 2 },
      { key: "role", kind: "changed", before: "viewer", after: "admin" },
    ]);
    expect(diffJson(null, null)).toEqual([]);
    expect(diffJson("x", "y")).toEqual([{ key: null, kind: "changed", before: "x", after: "y" }]);
  });
});

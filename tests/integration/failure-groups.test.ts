/**
 * Failure groups, mean time to recover and a session's failure summary (SPEC 7.6, 8), after real
 * ingest through the agent API: groups by normalized message with the range and toolName filters,
 * MTTR after an escalation and its recovery, and `sessions.get` `failureSummary`. PGlite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { at, result, uid } from "../support/agent";
import { failure } from "@/db/schema";
import { fingerprintError } from "@/server/engine/failure-fingerprint";
import { listFailures } from "@/server/dashboard/failures";
import { getKeyDetail } from "@/server/dashboard/key-detail";

describe.each(DATABASE_KINDS)("failure groups on %s", (kind) => {
  const app = useTestApp(kind);
  const ingest = async (key: string, events: unknown[]) => {
    const res = await app.mutation("ingest.events", { events }, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const groups = async (key: string, input?: unknown) => {
    const res = await app.query("failures.groups", input, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data.groups as any[];
  };

  it("groups failures that differ only in ids; different causes stay apart; range and toolName filter", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const other = await app.seedWorkspace();
    const now = Date.now();
    const [s1, s2] = [uid("s"), uid("s")];
    const notFound = (id: string) => `Error: ENOENT: no such file or directory, open '/srv/data/${id}.json'`;
    await ingest(key, [
      ...["a1b2c3", "ff00aa", "123456"].map((id, i) => result(i < 2 ? s1 : s2, "read_file", { path: `/srv/data/${id}.json` }, { success: false, error: notFound(id) }, { ts: at(now, -30 + i) })),
      result(s1, "http_request", { url: "https://api.example.com/v1/users/17" }, { success: false, httpStatus: 404, error: "Request failed with status code 404: GET https://api.example.com/v1/users/17" }, { ts: at(now, -20) }),
      result(s2, "http_request", { url: "https://api.example.com/v1/users/42" }, { success: false, httpStatus: 404, error: "Request failed with status code 404: GET https://api.example.com/v1/users/42" }, { ts: at(now, -19) }),
      result(s2, "http_request", { url: "https://api.example.com/v1/users" }, { success: false, httpStatus: 500, error: "Request failed with status code 500: POST https://api.example.com/v1/users" }, { ts: at(now, -18) }),
      // Two days old: outside 24h, inside 7d (its own session: a session's clock never goes back).
      result(uid("s"), "bash", { command: "kubectl get pods" }, { success: false, error: "bash: line 3: kubectl: command not found" }, { ts: at(now, -2 * 24 * 60) }),
    ]);
    // Another workspace's identical failure never shows.
    await ingest(other.key, [result(uid("s"), "read_file", { path: "/x" }, { success: false, error: notFound("zz9") })]);

    const stored = await app.db.select({ fingerprint: failure.fingerprint }).from(failure).where(eq(failure.workspaceId, workspaceId));
    expect(stored.every((r) => typeof r.fingerprint === "string" && r.fingerprint.length === 16)).toBe(true);

    const week = await groups(key, { range: "7d" });
    expect(week.map((g) => [g.count, g.toolNames])).toEqual([
      [3, ["read_file"]],
      [2, ["http_request"]],
      [1, ["http_request"]],
      [1, ["bash"]],
    ]);
    const [files, http404] = week;
    expect(files).toMatchObject({
      fingerprint: fingerprintError(notFound("a1b2c3")).fingerprint,
      sample: "Error: ENOENT: no such file or directory, open '<str>'",
      sessions: 2,
    });
    // Different paths are different keys (args hash) of one group.
    expect(files.failureKeys).toHaveLength(3);
    expect(files.failureKeys.every((k: string) => k.startsWith("read_file|"))).toBe(true);
    expect(Date.parse(files.firstSeen)).toBeLessThan(Date.parse(files.lastSeen));
    expect(http404.sample).toBe("Request failed with status code 404: GET <url>");
    expect(week[2].sample).toContain("status code 500");

    const day = await groups(key, { range: "24h" });
    expect(day.map((g) => g.toolNames[0])).not.toContain("bash");
    expect(day).toHaveLength(3);
    const httpOnly = await groups(key, { range: "all", toolName: "http_request" });
    expect(httpOnly.map((g) => g.count)).toEqual([2, 1]);
    // The default range is a week.
    expect(await groups(key)).toEqual(week);

    // A group opens its failures: the list filters by fingerprint.
    const list = await listFailures(app.db, workspaceId, { fingerprint: files.fingerprint });
    expect(list.total).toBe(3);
    expect(new Set(list.rows.map((r) => r.toolName))).toEqual(new Set(["read_file"]));
  });

  it("bad input is a 400 naming the field", async () => {
    const { key } = await app.seedWorkspace();
    const cases: Array<[unknown, string[]]> = [
      [{ range: "2w" }, ["range"]],
      [{ range: 7 }, ["range"]],
      [{ toolName: "" }, ["toolName"]],
      [{ toolName: "x".repeat(300) }, ["toolName"]],
    ];
    for (const [input, path] of cases) {
      const res = await app.query("failures.groups", input, { key });
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.body.error!.data.issues!.map((i: { path: string[] }) => i.path)).toContainEqual(path);
    }
    const extra = await app.query("failures.groups", { range: "7d", since: "yesterday" }, { key });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain("since");
    expect((await app.query("failures.groups", {}, {})).status).toBe(401);
  });

  it("mean time to recover after an escalation and its recovery; the session's failure summary", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const base = Date.now() - 60 * 60_000;
    const s = uid("s");
    const url = "https://api.example.com/v1/users";
    const fkey = "http_request|domain=api.example.com|path_prefix=v1";
    await ingest(key, [
      { type: "session.start", id: uid(), sessionId: s, agent: "crawler", model: "gpt-x", ts: at(base, 0) },
      ...[1, 2, 3].map((m) => result(s, "http_request", { url: `${url}/${m * 7}` }, { success: false, httpStatus: 503, error: `HTTP 503 Service Unavailable (request id ${crypto.randomUUID()})` }, { ts: at(base, m) })),
      result(s, "read_file", { path: "/etc/app.conf" }, { success: false, error: "EACCES: permission denied, open '/etc/app.conf'" }, { ts: at(base, 4) }),
    ]);
    const before = (await app.query("reliability.status", { toolName: "http_request" }, { key })).body.result!.data;
    const escalated = before.keys.find((k: any) => k.failureKey === fkey);
    expect(escalated.state).toBe("escalated");
    expect(escalated).not.toHaveProperty("meanTimeToRecoverSeconds");
    expect(before).not.toHaveProperty("meanTimeToRecoverSeconds");

    // Escalated at minute 3; after expiry and cooldown, three successes recover it at minute 36.
    await ingest(key, [31, 32, 33].map((m) => result(s, "http_request", { url }, { success: true, httpStatus: 200 }, { ts: at(base, m + 3) })));
    const after = (await app.query("reliability.status", { toolName: "http_request" }, { key })).body.result!.data;
    const recovered = after.keys.find((k: any) => k.failureKey === fkey);
    expect(recovered).toMatchObject({ state: "trusted", meanTimeToRecoverSeconds: 33 * 60, totalFailures: 3 });
    expect(after.meanTimeToRecoverSeconds).toBe(33 * 60);
    const all = (await app.query("reliability.status", {}, { key })).body.result!.data;
    expect(all.keys.find((k: any) => k.failureKey === fkey).meanTimeToRecoverSeconds).toBe(33 * 60);
    expect(all.keys.find((k: any) => k.toolName === "read_file")).not.toHaveProperty("meanTimeToRecoverSeconds");

    const detail = await getKeyDetail(app.db, workspaceId, fkey);
    expect(detail!.meanTimeToRecover).toEqual({ keySeconds: 33 * 60, keyRecoveries: 1, toolSeconds: 33 * 60 });

    await ingest(key, [{ type: "session.end", id: uid(), sessionId: s, ts: at(base, 40) }]);
    const view = await app.query("sessions.get", { sessionId: s }, { key });
    expect(view.status, JSON.stringify(view.body)).toBe(200);
    const summary = view.body.result!.data.failureSummary;
    expect(summary.failures).toBe(4);
    expect(summary.failed.map((f: any) => [f.failureKey, f.count])).toEqual([
      [fkey, 3],
      [expect.stringMatching(/^read_file/), 1],
    ]);
    expect(summary.groups.map((g: any) => [g.sample, g.count])).toEqual([
      ["HTTP 503 Service Unavailable (request id <uuid>)", 3],
      ["EACCES: permission denied, open '<str>'", 1],
    ]);
    expect(summary.escalatedKeys).toEqual([expect.objectContaining({ failureKey: fkey, toState: "escalated", at: at(base, 3) })]);
    expect(Array.isArray(summary.patterns)).toBe(true);
    expect(summary.outcome).toMatchObject({ status: "ended", lastFailure: { toolName: "read_file", at: at(base, 4) } });
    expect(summary.outcome.endedAt).not.toBeNull();

    // A session without failures has an empty summary.
    const quiet = uid("s");
    await ingest(key, [{ type: "session.start", id: uid(), sessionId: quiet, agent: "crawler", ts: at(base, 50) }]);
    const q = (await app.query("sessions.get", { sessionId: quiet }, { key })).body.result!.data.failureSummary;
    expect(q).toMatchObject({ failures: 0, failed: [], groups: [], escalatedKeys: [], patterns: [], outcome: { lastFailure: null } });
  });
});

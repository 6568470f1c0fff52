import { describe, expect, it } from "vitest";
import v8 from "node:v8";
import vm from "node:vm";
import { parse } from "csv-parse/sync";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { at, call, result, uid } from "../support/agent";
import { listWorkspaceAudit } from "@/server/dashboard/audit";
import { failureQueryFromParams, failureSource, exportStream, handleExport, sessionFiltersFromParams, auditFiltersFromParams } from "@/server/dashboard/export";
import { listFailures } from "@/server/dashboard/failures";
import { listSessions, loadSessionControl } from "@/server/dashboard/sessions-data";
import { writeAudit, SYSTEM_ACTOR } from "@/server/services/audit";

describe.each(DATABASE_KINDS)("exports on %s", (kind) => {
  const app = useTestApp(kind);

  const get = (path: string, cookie?: string) =>
    handleExport(new Request(`http://localhost${path}`, { headers: cookie ? { cookie } : {} }), app.runtime, path.split("/")[3].split("?")[0]);

  /** A workspace with a viewer, two sessions and failures whose messages need escaping. */
  async function seeded() {
    const ws = await app.seedWorkspace();
    const viewer = await app.signUp(`viewer-${uid()}@example.com`);
    await app.addMember(ws.organizationId, viewer.userId, "viewer");
    const now = Date.now();
    const [s1, s2] = [uid("s"), uid("s")];
    const messages = ['bad "quote", comma', "line one\nline two", "=HYPERLINK(\"http://evil\")", "-bash: kubectl: not found", "@SUM(A1)", "+1 more", "plain"];
    await ingestAccepted(app, ws.key, [
      call(s1, "bash", { command: "ls" }, { ts: at(now, -50) }),
      ...messages.map((m, i) => result(i % 2 ? s1 : s2, i < 4 ? "bash" : "read_file", i < 4 ? { command: `c${i}` } : { path: `/p/${i}` }, { success: false, error: m }, { ts: at(now, -40 + i) })),
      result(s2, "http_request", { url: "https://api.example.com/v1/x" }, { success: false, httpStatus: 503, error: "old" }, { ts: at(now, -3 * 24 * 60) }),
    ]);
    return { ws, viewer, messages, sessions: [s1, s2] };
  }

  it("failures as CSV parse back to the page's rows for the same filters, formulas defused", async () => {
    const { ws, viewer, messages } = await seeded();
    for (const filters of ["", "&tool=bash", "&range=24h", "&q=line"]) {
      const res = await get(`/api/export/failures?workspace=${ws.slug}&format=csv${filters}`, viewer.cookie);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
      expect(res.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="vigil-${ws.slug}-failures-[0-9-]+\\.csv"$`));
      const records: Record<string, string>[] = parse(await res.text(), { columns: true });
      const page = await listFailures(app.db, ws.workspaceId, { ...failureQueryFromParams(Object.fromEntries(new URLSearchParams(filters))), pageSize: 200 });
      expect(records.length, filters).toBe(page.total);
      expect(records.map((r) => Number(r.id))).toEqual(page.rows.map((r) => r.id));
    }
    const all: Record<string, string>[] = parse(await (await get(`/api/export/failures?workspace=${ws.slug}`, viewer.cookie)).text(), { columns: true });
    const byText = new Set(all.map((r) => r.errorMessage));
    // Text, commas, quotes and line breaks come back as written; a formula-like start gets a leading '.
    for (const m of messages) expect(byText.has(/^[=+\-@]/.test(m) ? `'${m}` : m), m).toBe(true);
    expect(all.find((r) => r.errorMessage === "old")).toMatchObject({ toolName: "http_request", httpStatus: "503", severity: expect.any(String) });
  });

  it("failures as JSON: one array, the page's count and fields", async () => {
    const { ws, viewer } = await seeded();
    const res = await get(`/api/export/failures?workspace=${ws.slug}&format=json&tool=bash`, viewer.cookie);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const rows = JSON.parse(await res.text());
    const page = await listFailures(app.db, ws.workspaceId, { tool: "bash" });
    expect(rows).toHaveLength(page.total);
    expect(rows[0]).toMatchObject({ id: page.rows[0].id, failureKey: page.rows[0].failureKey, errorMessage: page.rows[0].errorMessage, ts: page.rows[0].ts });
    // An empty export is still valid JSON.
    const none = await get(`/api/export/failures?workspace=${ws.slug}&format=json&tool=nothing`, viewer.cookie);
    expect(JSON.parse(await none.text())).toEqual([]);
  });

  it("sessions and the audit log export what their pages count", async () => {
    const { ws, viewer, sessions } = await seeded();
    const control = await loadSessionControl(app.db, ws.workspaceId);
    for (const filters of ["", `&q=${sessions[0]}`, "&status=active"]) {
      const sp = Object.fromEntries(new URLSearchParams(filters));
      const page = await listSessions(app.db, { workspaceId: ws.workspaceId, ...sessionFiltersFromParams(sp), page: 1, pageSize: 200, control });
      const csv: Record<string, string>[] = parse(await (await get(`/api/export/sessions?workspace=${ws.slug}${filters}`, viewer.cookie)).text(), { columns: true });
      expect(csv.map((r) => r.sessionId).sort(), filters).toEqual(page.rows.map((r) => r.sessionId).sort());
      const json = JSON.parse(await (await get(`/api/export/sessions?workspace=${ws.slug}&format=json${filters}`, viewer.cookie)).text());
      expect(json).toHaveLength(page.total);
    }
    for (let i = 0; i < 5; i++)
      await writeAudit(app.db, { organizationId: ws.organizationId, workspaceId: ws.workspaceId, actor: SYSTEM_ACTOR, action: i % 2 ? "rule.update" : "failure_key.reset", target: `k,${i}`, after: { n: i, text: "a \"b\"" } });
    for (const filters of ["", "&action=rule", "&actor=system"]) {
      const sp = Object.fromEntries(new URLSearchParams(filters));
      const page = await listWorkspaceAudit(app.db, ws.workspaceId, { ...auditFiltersFromParams(sp, ws.organizationId), pageSize: 200 });
      const csv: Record<string, string>[] = parse(await (await get(`/api/export/audit?workspace=${ws.slug}${filters}`, viewer.cookie)).text(), { columns: true });
      expect(csv.map((r) => Number(r.id)), filters).toEqual(page.rows.map((r) => r.id));
      const json = JSON.parse(await (await get(`/api/export/audit?workspace=${ws.slug}&format=json${filters}`, viewer.cookie)).text());
      expect(json.map((r: { id: number }) => r.id)).toEqual(page.rows.map((r) => r.id));
    }
    const audit: Record<string, string>[] = parse(await (await get(`/api/export/audit?workspace=${ws.slug}&action=rule`, viewer.cookie)).text(), { columns: true });
    expect(JSON.parse(audit[0].after)).toEqual({ n: 3, text: 'a "b"' });
    expect(audit[0].target).toBe("k,3");
  });

  it("refuses a signed-out caller, another organization's member and bad parameters", async () => {
    const { ws } = await seeded();
    const stranger = await app.signUp(`stranger-${uid()}@example.com`);
    await app.seedWorkspace({ ownerUserId: stranger.userId });
    expect((await get(`/api/export/failures?workspace=${ws.slug}`)).status).toBe(401);
    const other = await get(`/api/export/failures?workspace=${ws.slug}`, stranger.cookie);
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain("errorMessage");
    const badFormat = await get(`/api/export/failures?workspace=${ws.slug}&format=xlsx`, stranger.cookie);
    expect(badFormat.status).toBe(400);
    expect(await badFormat.json()).toMatchObject({ error: { field: "format" } });
    const noWorkspace = await get(`/api/export/audit?format=csv`, stranger.cookie);
    expect(noWorkspace.status).toBe(400);
    expect(await noWorkspace.json()).toMatchObject({ error: { field: "workspace" } });
    expect((await get(`/api/export/keys?workspace=${ws.slug}`, stranger.cookie)).status).toBe(404);
  });

  it("200,000 failures stream in flat memory, every row once", { timeout: 240_000 }, async () => {
    const ws = await app.seedWorkspace();
    const N = 200_000;
    const base = Date.now() - 3600_000;
    // Straight into the table: the export reads what is stored, however it got there.
    await app.db.execute(sql`insert into failure (workspace_id, event_id, failure_key, tool_name, severity, weight, ts, session_id, agent, error_message)
      select ${ws.workspaceId}, 'e-' || g, 'bash|command=x' || (g % 50), 'bash', 'server_error', 1, ${new Date(base).toISOString()}::timestamptz + (g % 5000) * interval '1 millisecond',
        's-' || (g % 300), 'agent', 'error number ' || g || ', with "quotes" and a comma'
      from generate_series(1, ${N}) g`);
    const gc = vm.runInNewContext("gc") as () => void;
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const reader = exportStream(failureSource(app.db, ws.workspaceId, {}), "csv").getReader();
    const decoder = new TextDecoder();
    let lines = 0;
    let bytes = 0;
    let tail = "";
    let chunks = 0;
    let start = 0;
    let peak = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      const text = tail + decoder.decode(value, { stream: true });
      const parts = text.split("\r\n");
      tail = parts.pop()!;
      lines += parts.length;
      chunks++;
      // Measured after the first chunks (the driver's prepared statements and buffers warm up).
      if (chunks === 5) start = heap();
      else if (chunks > 5 && chunks % 20 === 0) peak = Math.max(peak, heap() - start);
    }
    expect(lines).toBe(N + 1); // the header and every row
    expect(bytes).toBeGreaterThan(N * 80);
    // The whole export is ~20 MB of text; holding it (or its rows) would grow the heap by far more than this.
    expect(peak).toBeLessThan(8 * 1024 * 1024);
  });
});

// `gc` for the memory test's measurements.
v8.setFlagsFromString("--expose-gc");

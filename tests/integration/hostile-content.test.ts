/**
 * Secrets sent by agents (issue 13.5, SPEC 2): values of secret-looking keys and bearer-looking
 * strings in tool arguments and error messages are never stored in clear — not in events, failures,
 * approvals, sessions, nudges or the audit log. The whole database is scanned as text afterwards.
 */
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { HOSTILE_SESSION, SECRETS, SECRET_VALUES, XSS, hostileEvents } from "../fixtures/hostile";
import { STATUS_ERROR, hex, jsonBody, readableSpan } from "../support/otlp-spans";
import { handleOtlpTraces } from "@/server/agent-api/otlp";
import { applyDueTraces } from "@/server/otlp/applier";

function rowsOf(result: unknown): Record<string, unknown>[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Record<string, unknown>[];
}

describe.each(DATABASE_KINDS)("hostile agent data on %s", (kind) => {
  const app = useTestApp(kind);

  it("takes agents and sessions named after Object.prototype's members like any others (session decay included)", async () => {
    const ws = await app.seedWorkspace();
    const base = Date.now() - 86400_000;
    const ts = (m: number) => new Date(base + m * 60_000).toISOString();
    const args = { url: "https://api.a.com/v1/x" };
    const failed = { toolName: "http_request", args, success: false, httpStatus: 503 };
    // Two failures of an ended session, one later session of the same agent: 2 × 0.8 — whether
    // the later results come in the same batch or in one of their own, which loads the timeline.
    const first = [
      { type: "session.start", id: "p1", sessionId: "__proto__", agent: "__proto__", ts: ts(0) },
      { type: "tool.result", id: "p2", sessionId: "__proto__", callId: "c1", ...failed, ts: ts(1) },
      { type: "tool.result", id: "p3", sessionId: "__proto__", callId: "c2", ...failed, ts: ts(2) },
      { type: "session.end", id: "p4", sessionId: "__proto__", ts: ts(3) },
    ];
    const later = [
      { type: "session.start", id: "p5", sessionId: "constructor", agent: "__proto__", ts: ts(4) },
      { type: "tool.result", id: "p6", sessionId: "constructor", callId: "c3", toolName: "http_request", args, success: true, ts: ts(5) },
    ];
    for (const events of [first, later]) {
      const res = await app.mutation("ingest.events", { events }, { key: ws.key });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    }
    const status = await app.query("reliability.status", { toolName: "http_request" }, { key: ws.key });
    const key = status.body.result!.data.keys.find((k: { failureKey: string }) => k.failureKey === "http_request|domain=api.a.com|path_prefix=v1");
    expect(key.effectiveFailures).toBeCloseTo(1.6, 9);
  });

  it("stores no secret value in clear anywhere in the database", async () => {
    const ws = await app.seedWorkspace();
    expect((await app.mutation("config.put", { settings: { recovery_mode: "ask" } }, { key: ws.key })).status).toBe(200);
    const ingest = await app.mutation("ingest.events", { events: hostileEvents(Date.now()) }, { key: ws.key });
    expect(ingest.status, JSON.stringify(ingest.body).slice(0, 500)).toBe(200);

    // A tool-call approval with secret arguments, denied with a script-bearing comment.
    const guard = await app.mutation(
      "guard.check",
      { id: "g-1", sessionId: "guarded-session", callId: "g-call-1", toolName: "http_request", args: { url: XSS.url, headers: { authorization: SECRETS.authorization }, password: SECRETS.password }, waitForApprovalSeconds: 0.2 },
      { key: ws.key },
    );
    expect(guard.status).toBe(200);
    expect(guard.body.result!.data.decision).toBe("ask");
    const approvals = await app.query("approvals.list", { status: "pending" }, { key: ws.key });
    const pending = approvals.body.result!.data.approvals as { id: string }[];
    expect(pending.length).toBeGreaterThan(0);
    for (const a of pending) {
      const res = await app.mutation("approvals.resolve", { approvalId: a.id, decision: "deny", comment: `${XSS.script} token=${SECRETS.token}` }, { key: ws.key });
      expect(res.status).toBe(200);
    }

    // The paused session resumed with script-bearing guidance that carries a secret.
    const resume = await app.mutation("sessions.resume", { sessionId: HOSTILE_SESSION, guidance: `${XSS.svg} use password=${SECRETS.password}` }, { key: ws.key });
    expect(resume.status, JSON.stringify(resume.body).slice(0, 300)).toBe(200);

    // The same secrets through OTLP: arguments, model text and an error in span attributes (spans are stored before they are mapped).
    const traceId = hex(16);
    const rootId = hex(8);
    const base = Date.now() - 60_000;
    const spans = [
      readableSpan({
        traceId,
        parentSpanId: rootId,
        name: "execute_tool http_request",
        startMs: base + 1_000,
        endMs: base + 1_500,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "http_request",
          "gen_ai.tool.call.id": "otlp-call-1",
          "gen_ai.tool.call.arguments": JSON.stringify({ url: `https://api.example.com/v1/x?token=${SECRETS.token}`, headers: { authorization: SECRETS.authorization }, api_key: SECRETS.apiKey }),
          "gen_ai.conversation.id": "otlp-hostile-session",
        },
        status: { code: STATUS_ERROR, message: `401 for password=${SECRETS.password}` },
      }),
      readableSpan({
        traceId,
        parentSpanId: rootId,
        name: "chat gpt-4o",
        startMs: base + 200,
        endMs: base + 800,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": "gpt-4o",
          "gen_ai.conversation.id": "otlp-hostile-session",
          "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: `Using Bearer ${SECRETS.bearer} now` }] }]),
        },
      }),
      readableSpan({ traceId, spanId: rootId, name: "invoke_agent crawler", startMs: base, endMs: base + 2_000, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "otlp-hostile-session" } }),
    ];
    const otlp = await handleOtlpTraces(
      new Request("http://localhost/api/otlp/v1/traces", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${ws.key}` }, body: jsonBody(spans) as BodyInit }),
      app.runtime,
    );
    expect(otlp.status).toBe(200);
    await applyDueTraces(app.db, Date.now() + 60_000); // the root is there, so the handler may have applied it already

    // Every text of every table.
    const tables = rowsOf(
      await app.db.execute(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`),
    ).map((r) => String(r.table_name));
    expect(tables).toContain("failure");
    const found: string[] = [];
    let scanned = 0;
    for (const table of tables) {
      const rows = rowsOf(await app.db.execute(sql.raw(`select t::text as row from "${table}" t`)));
      scanned += rows.length;
      for (const { row } of rows) for (const secret of SECRET_VALUES) if (String(row).includes(secret)) found.push(`${table}: ${secret}`);
    }
    // The data did arrive (hostile text is stored as text), only the secrets are gone.
    expect(scanned).toBeGreaterThan(50);
    const events = rowsOf(await app.db.execute(sql`select count(*)::int as n from event where payload::text like ${"%" + "window.__pwned" + "%"}`));
    expect(Number(events[0].n)).toBeGreaterThan(0);
    const otlpCalls = rowsOf(await app.db.execute(sql`select count(*)::int as n from event where session_id = 'otlp-hostile-session' and type = 'tool.result'`));
    expect(Number(otlpCalls[0].n), "the OTLP tool call was still mapped after redaction").toBe(1);
    console.log(`[hostile] ${kind}: ${tables.length} tables, ${scanned} rows scanned, ${found.length} secrets in clear`);
    expect([...new Set(found)]).toEqual([]);
  });
});

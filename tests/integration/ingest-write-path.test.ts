/**
 * How ingest writes a batch (issue 15): the rows travel as one JSON document per table and, on
 * PostgreSQL, a batch's writes are sent together (pipelined). These check what that must not
 * change: a failing statement in the middle of the pipeline leaves nothing of the batch and the
 * next batch goes through; the event rows, written before the trust states are locked, get the
 * severity the trust phase settles; a string that is not valid in jsonb (an error message cut in the middle
 * of a character) is stored with U+FFFD instead of failing the batch; a trust-state row this
 * process has seen but that is gone (a recreated database) is created again.
 */
import net from "node:net";
import { once } from "node:events";
import { beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import * as schema from "@/db/schema";
import { rowsOf, type Database, type Db } from "@/db/client";
import { preparingClient } from "@/db/prepared-client";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { agentSession, event, failure, keyFailure, keyResultChunk, keyState } from "@/db/schema";
import { upgradeKeyContext } from "@/server/engine/key-history";
import { applyBatch } from "@/server/ingest/apply";
import { normalizeEvents } from "@/server/ingest/schema";
import { upgradeSessionBehaviour } from "@/server/engine/behaviour-state";
import { keyContexts } from "@/server/ingest/row-version-cache";
import { lockKeyStates, timelineOfKeys, timelineOfSessions } from "@/server/ingest/load";

const kinds = DATABASE_KINDS.filter((k) => k !== "citus");

describe.each(kinds)("ingest write path on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const app = useTestApp(kind);
  beforeAll(async () => {
    ws = await app.seedWorkspace();
  });

  const ingest = (events: unknown[]) => app.mutation("ingest.events", { events }, { key: ws.key });

  it("a statement failing late in the batch's writes leaves nothing of the batch, and the next batch goes through", async () => {
    // A real failure in the daily roll-up, the last statement: after the session phase's writes
    // (events, sessions) and the trust phase's (failures, key states).
    await app.db.execute(sql`
      create or replace function vigil_test_refuse_stat() returns trigger language plpgsql as $$
      begin
        if new.tool_name = 'refused_tool' then raise exception 'refused by test trigger'; end if;
        return new;
      end $$`);
    await app.db.execute(sql`create or replace trigger vigil_test_refuse_stat before insert on daily_tool_stat for each row execute function vigil_test_refuse_stat()`);
    try {
      const s = uid("s");
      const res = await ingest([
        { type: "session.start", id: uid(), sessionId: s, agent: "refused-agent" },
        result(s, "refused_tool", { url: "https://svc.example.com/a" }, { success: false, error: "500 Internal Server Error", httpStatus: 500 }),
      ]);
      expect(res.status).toBe(500);
      const left = await app.db.select({ id: event.id }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s)));
      expect(left).toEqual([]);
      const sessions = await app.db.select({ id: agentSession.sessionId }).from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
      expect(sessions).toEqual([]);
      const failures = await app.db.select({ id: failure.eventId }).from(failure).where(and(eq(failure.workspaceId, ws.workspaceId), eq(failure.sessionId, s)));
      expect(failures).toEqual([]);
      const keys = await app.db.select({ k: keyState.failureKey }).from(keyState).where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.toolName, "refused_tool")));
      expect(keys).toEqual([]);
    } finally {
      await app.db.execute(sql`drop trigger vigil_test_refuse_stat on daily_tool_stat`);
    }
    const s2 = uid("s");
    const ok = await ingest([result(s2, "http_request", { url: "https://svc.example.com/a" }, { success: true, result: { ok: 1 } })]);
    expect(ok.status).toBe(200);
    expect(ok.body.result!.data.accepted).toBe(1);
  });

  it("a session-phase write that fails is the error the batch reports (not the lock statements queued behind it)", async () => {
    // On PostgreSQL the lock statements are sent right behind the session phase's writes; when one
    // of those fails, the locks fail too ("transaction is aborted"), and the cause must win.
    await app.db.execute(sql`
      create or replace function vigil_test_refuse_pattern() returns trigger language plpgsql as $$
      begin
        raise exception 'pattern refused by test trigger';
      end $$`);
    await app.db.execute(sql`create or replace trigger vigil_test_refuse_pattern before insert on pattern_detection for each row execute function vigil_test_refuse_pattern()`);
    const s = uid("s");
    try {
      // The same failing call three times in a row: a pattern (SPEC 5) in the session phase.
      const events = normalizeEvents(
        Array.from({ length: 4 }, (_, i) => result(s, "http_request", { url: "https://svc.example.com/same" }, { success: false, error: "500 Internal Server Error", httpStatus: 500 }, { ts: Date.now() - 10_000 + i * 1000 })) as never,
        Date.now(),
      );
      const attempt = app.db.transaction((tx) => applyBatch(tx, { workspaceId: ws.workspaceId, organizationId: ws.organizationId }, events));
      const err = await attempt.then(() => null, (e: unknown) => e);
      expect(err).not.toBeNull();
      const text = (e: unknown): string => (e instanceof Error ? `${e.message} ${text(e.cause)}` : "");
      expect(text(err)).toMatch(/pattern refused by test trigger/);
    } finally {
      await app.db.execute(sql`drop trigger vigil_test_refuse_pattern on pattern_detection`);
    }
    const left = await app.db.select({ id: event.id }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s)));
    expect(left).toEqual([]);
  });

  it("a failing session lock is the error the batch reports (not the event-id claims queued behind it), and nothing is claimed", async () => {
    // On PostgreSQL the configuration read, the session locks and the event-id claims go out
    // together; the claims behind a failed lock only see an aborted transaction.
    await app.db.execute(sql`
      create or replace function vigil_test_refuse_session() returns trigger language plpgsql as $$
      begin
        if new.session_id like 'refused-%' then raise exception 'session refused by test trigger'; end if;
        return new;
      end $$`);
    await app.db.execute(sql`create or replace trigger vigil_test_refuse_session before insert on agent_session for each row execute function vigil_test_refuse_session()`);
    const s = uid("refused");
    const events = normalizeEvents([result(s, "http_request", { url: "https://svc.example.com/a" }, { success: true, result: { ok: 1 } })] as never, Date.now());
    try {
      const attempt = app.db.transaction((tx) => applyBatch(tx, { workspaceId: ws.workspaceId, organizationId: ws.organizationId }, events));
      const err = await attempt.then(() => null, (e: unknown) => e);
      const text = (e: unknown): string => (e instanceof Error ? `${e.message} ${text(e.cause)}` : "");
      expect(text(err)).toMatch(/session refused by test trigger/);
    } finally {
      await app.db.execute(sql`drop trigger vigil_test_refuse_session on agent_session`);
    }
    // The same events again go through: their ids were not claimed by the failed attempt.
    const again = await app.db.transaction((tx) => applyBatch(tx, { workspaceId: ws.workspaceId, organizationId: ws.organizationId }, events));
    expect(again.accepted).toBe(1);
  });

  it("a permission failure upgraded to repeated_auth by the key's history is stored so in the event log written before it", async () => {
    // The event rows are written before the trust states are locked, with the severity known
    // then; the third permission failure within ten minutes (SPEC 3) is upgraded after.
    const s = uid("s");
    const base = Date.now() - 60_000;
    const denied = (i: number) => result(s, "http_request", { url: "https://auth.example.com/private" }, { success: false, error: "403 Forbidden", httpStatus: 403 }, { ts: new Date(base + i * 1000).toISOString() });
    const first = [denied(0), denied(1), denied(2)];
    const second = [denied(3)];
    expect((await ingest(first)).status).toBe(200);
    expect((await ingest(second)).status).toBe(200);
    const ids = [...first, ...second].map((e) => e.id);
    const rows = await app.db.select({ id: event.id, severity: event.severity }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s)));
    const bySeverity = new Map(rows.map((r) => [r.id, r.severity]));
    expect(ids.map((id) => bySeverity.get(id))).toEqual(["permission", "permission", "repeated_auth", "repeated_auth"]);
    const failures = await app.db.select({ id: failure.eventId, severity: failure.severity }).from(failure).where(and(eq(failure.workspaceId, ws.workspaceId), eq(failure.sessionId, s)));
    const failureSeverity = new Map(failures.map((r) => [r.id, r.severity]));
    expect(ids.map((id) => failureSeverity.get(id))).toEqual(["permission", "permission", "repeated_auth", "repeated_auth"]);
  });

  it("an error message cut in the middle of a character is stored with U+FFFD, not refused", async () => {
    const s = uid("s");
    // Stored error texts are cut at 2,000 characters: here between the two halves of 💥.
    const error = `${"e".repeat(1999)}💥 tail`;
    const res = await ingest([result(s, "http_request", { url: "https://svc.example.com/cut" }, { success: false, error, httpStatus: 503 })]);
    expect(res.status).toBe(200);
    const [row] = await app.db.select({ message: failure.errorMessage }).from(failure).where(and(eq(failure.workspaceId, ws.workspaceId), eq(failure.sessionId, s)));
    expect(row.message).toBe(`${"e".repeat(1999)}\uFFFD`);
  });

  it("a trust-state row seen before and since removed is created again, from the new result on", async () => {
    const args = { url: "https://gone.example.com/v1/items/1" };
    const fail = () => result(uid("s"), "http_request", args, { success: false, error: "503 Service Unavailable", httpStatus: 503 });
    expect((await ingest([fail()])).status).toBe(200);
    const where = and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.level, "key"), sql`${keyState.failureKey} like '%gone.example.com%'`);
    const [before] = await app.db.select({ key: keyState.failureKey, failures: keyState.totalFailures }).from(keyState).where(where);
    expect(before.failures).toBe(1);
    await app.db.delete(keyState).where(where);
    expect((await ingest([fail()])).status).toBe(200);
    const after = await app.db.select({ key: keyState.failureKey, failures: keyState.totalFailures, calls: keyState.totalCalls }).from(keyState).where(where);
    expect(after).toEqual([{ key: before.key, failures: 1, calls: 1 }]);
  });

  it("a trust state and its history are kept in memory under the row version ingest wrote; one changed behind the app's back is read again", async () => {
    const s = uid("s");
    const args = { url: "https://history.example.com/v1/items" };
    const served = (success: boolean) => result(s, "http_request", args, success ? { success: true, httpStatus: 200 } : { success: false, error: "503 Service Unavailable", httpStatus: 503 });
    const failureKey = "http_request|domain=history.example.com|path_prefix=v1";
    const stored = async () => {
      const [row] = await app.db
        .select({ version: sql<string>`${keyState}.xmin::text`, data: sql<string>`${keyState.data}::text`, trust: keyState.trust })
        .from(keyState)
        .where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.failureKey, failureKey)));
      const failures = await app.db
        .select({ seq: keyFailure.seq, version: sql<string>`${keyFailure}.xmin::text` })
        .from(keyFailure)
        .where(and(eq(keyFailure.workspaceId, ws.workspaceId), eq(keyFailure.failureKey, failureKey)))
        .orderBy(keyFailure.seq);
      return { ...row, failures };
    };
    expect((await ingest([served(false), served(false)])).status).toBe(200);
    const first = await stored();
    expect(first.failures.map((f) => f.seq)).toEqual([1, 2]);
    expect(keyContexts.get(app.db, ws.workspaceId, failureKey)).toMatchObject({ version: first.version, value: { state: { totalFailures: 2 }, failures: [{}, {}] } });
    // A success changes the state, not the history: the stored results and failure rows are left as they were.
    expect((await ingest([served(true)])).status).toBe(200);
    const second = await stored();
    expect(second.trust).toMatchObject({ totalCalls: 3, totalFailures: 2, state: "trusted" });
    expect(second.version).not.toBe(first.version);
    expect(second.data).toBe(first.data);
    expect(second.failures).toEqual(first.failures);
    expect(keyContexts.get(app.db, ws.workspaceId, failureKey)?.version).toBe(second.version);
    // The history cleared behind the app's back (another instance, SQL): the next batch must count
    // from the row as it is — one failure, still trusted — not from the two failures held in memory
    // (with them, the third would meet the threshold of 3 and escalate the key).
    await app.db.transaction(async (tx) => {
      await tx.execute(sql`update key_state set tool_name = tool_name where workspace_id = ${ws.workspaceId} and failure_key = ${failureKey}`);
      await tx.execute(sql`delete from key_failure where workspace_id = ${ws.workspaceId} and failure_key = ${failureKey}`);
    });
    expect((await ingest([served(false)])).status).toBe(200);
    const third = await stored();
    expect(third.failures.map((f) => f.seq)).toEqual([4]);
    expect(third.trust).toMatchObject({ state: "trusted", totalFailures: 3 });
  });

  it("batches over trust states held in memory store what batches over states read afresh store", async () => {
    // The same traffic into two workspaces; before each batch of the second, every trust-state row
    // of that workspace gets a new version, so its batches read every state and history afresh.
    const mine = await app.seedWorkspace();
    const other = await app.seedWorkspace();
    // A domain rule: the domain-level state (and its history) is one of the states compared.
    // A rate rule by default: the result logs (stored in chunks) are compared too.
    for (const w of [mine, other])
      expect((await app.mutation("config.put", { default_rule: { rate_threshold: 0.6, rate_min_calls: 6 }, domain_rules: { "a.example.com": { count_threshold: 5 } } }, { key: w.key })).status).toBe(200);
    const base = Date.parse("2026-11-20T08:00:00.000Z");
    const urls = ["https://a.example.com/v1/x", "https://a.example.com/v2/y", "https://b.example.com/v1/z"];
    let n = 0;
    const batch = () =>
      Array.from({ length: 12 }, () => {
        n += 1;
        const failed = n % 3 === 0 || n % 7 === 0;
        return {
          ...result(`hist-s${n % 2}`, "http_request", { url: urls[n % urls.length] }, failed ? { success: false, error: "503 Service Unavailable", httpStatus: 503 } : { success: true }),
          id: `hist-${n}`,
          ts: new Date(base + n * 20_000).toISOString(),
        };
      });
    const states = async (workspaceId: string) => ({
      states: await app.db.select({ key: keyState.failureKey, trust: keyState.trust, data: keyState.data, effective: keyState.effectiveState }).from(keyState).where(eq(keyState.workspaceId, workspaceId)).orderBy(keyState.failureKey),
      failures: await app.db.select({ key: keyFailure.failureKey, seq: keyFailure.seq, record: keyFailure.record }).from(keyFailure).where(eq(keyFailure.workspaceId, workspaceId)).orderBy(keyFailure.failureKey, keyFailure.seq),
      results: await app.db.select({ key: keyResultChunk.failureKey, chunk: keyResultChunk.chunk, log: keyResultChunk.log }).from(keyResultChunk).where(eq(keyResultChunk.workspaceId, workspaceId)).orderBy(keyResultChunk.failureKey, keyResultChunk.chunk),
    });
    for (let i = 0; i < 8; i++) {
      const events = batch();
      expect((await app.mutation("ingest.events", { events }, { key: mine.key })).status).toBe(200);
      await app.db.execute(sql`update key_state set tool_name = tool_name where workspace_id = ${other.workspaceId}`);
      expect((await app.mutation("ingest.events", { events }, { key: other.key })).status).toBe(200);
    }
    const fresh = await states(other.workspaceId);
    expect(fresh.states.map((r) => r.key)).toContain("@domain:a.example.com");
    expect(await states(mine.workspaceId)).toEqual(fresh);
    expect(fresh.states.some((r) => (r.trust as { state: string }).state !== "trusted")).toBe(true);
    expect(new Set(fresh.failures.map((f) => f.key))).toContain("@domain:a.example.com");
    expect(fresh.results.length).toBeGreaterThan(0);
  });

  it("rows the window has passed are deleted: a key's failures below the first kept one, its result chunks below the log's first", async () => {
    const w = await app.seedWorkspace();
    expect((await app.mutation("config.put", { default_rule: { rate_threshold: 0.99, rate_min_calls: 100_000, count_threshold: 100_000, consecutive_threshold: 100_000 } }, { key: w.key })).status).toBe(200);
    const key = "http_request|domain=passed.example.com|path_prefix=v1";
    const base = Date.now() - 3 * 3600_000;
    let n = 0;
    const at = (ms: number, failed: boolean) => ({
      ...result("passed-s", "http_request", { url: "https://passed.example.com/v1/x" }, failed ? { success: false, error: "503 Service Unavailable", httpStatus: 503 } : { success: true }),
      id: `passed-${w.workspaceId}-${++n}`,
      ts: new Date(ms).toISOString(),
    });
    // 1,100 results in the first hour (chunks 0 and 1), two of them failures; then one failure two hours on.
    const first = Array.from({ length: 1100 }, (_, i) => at(base + i * 1000, i === 10 || i === 20));
    for (let i = 0; i < first.length; i += 500) expect((await app.mutation("ingest.events", { events: first.slice(i, i + 500) }, { key: w.key })).status).toBe(200);
    const rows = async () => ({
      failures: (await app.db.select({ seq: keyFailure.seq }).from(keyFailure).where(and(eq(keyFailure.workspaceId, w.workspaceId), eq(keyFailure.failureKey, key))).orderBy(keyFailure.seq)).map((r) => r.seq),
      chunks: (await app.db.select({ chunk: keyResultChunk.chunk }).from(keyResultChunk).where(and(eq(keyResultChunk.workspaceId, w.workspaceId), eq(keyResultChunk.failureKey, key))).orderBy(keyResultChunk.chunk)).map((r) => r.chunk),
    });
    expect(await rows()).toEqual({ failures: [11, 21], chunks: [0, 1] });
    expect((await app.mutation("ingest.events", { events: [at(base + 2 * 3600_000, true)] }, { key: w.key })).status).toBe(200);
    expect(await rows()).toEqual({ failures: [1101], chunks: [1] });
  });

  it("a hot key's result log is stored in chunks: a batch rewrites the chunk its results fall in, not the log", async () => {
    const w = await app.seedWorkspace();
    const rule = { rate_threshold: 0.9, rate_min_calls: 100_000, count_threshold: 100_000, consecutive_threshold: 100_000 };
    expect((await app.mutation("config.put", { default_rule: rule }, { key: w.key })).status).toBe(200);
    const key = "http_request|domain=hot.example.com|path_prefix=v1";
    const base = Date.now() - 10 * 60_000;
    let n = 0;
    const batch = (size: number) =>
      Array.from({ length: size }, () => ({ ...result("hot-s", "http_request", { url: "https://hot.example.com/v1/x" }, { success: true }), id: `hot-${w.workspaceId}-${++n}`, ts: new Date(base + n * 100).toISOString() }));
    for (let i = 0; i < 5; i++) expect((await app.mutation("ingest.events", { events: batch(500) }, { key: w.key })).status).toBe(200);
    const chunks = () =>
      app.db
        .select({ chunk: keyResultChunk.chunk, version: sql<string>`${keyResultChunk}.xmin::text`, log: keyResultChunk.log })
        .from(keyResultChunk)
        .where(and(eq(keyResultChunk.workspaceId, w.workspaceId), eq(keyResultChunk.failureKey, key)))
        .orderBy(keyResultChunk.chunk);
    // Results 1–2,500: chunks of seqs 1–1,023, 1,024–2,047 and 2,048–2,500.
    const before = await chunks();
    expect(before.map((c) => c.chunk)).toEqual([0, 1, 2]);
    expect((await app.mutation("ingest.events", { events: batch(10) }, { key: w.key })).status).toBe(200);
    const after = await chunks();
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
    expect(after[2].version).not.toBe(before[2].version);
    const [row] = await app.db.select({ data: keyState.data, trust: keyState.trust }).from(keyState).where(and(eq(keyState.workspaceId, w.workspaceId), eq(keyState.failureKey, key)));
    expect(row.data).toEqual({ resultsFrom: 1 });
    const log = upgradeKeyContext(row.trust, row.data, [], after.map((c) => c.log)).results;
    expect(log.ts).toHaveLength(2510);
    expect(log.ts[2509]).toBe(base + 2510 * 100);
  });

  it("sessions written by the JSON path read back as written (times, counters, behaviour)", async () => {
    const s = uid("s");
    const t = Date.parse("2026-11-20T10:00:00.000Z");
    const res = await ingest([
      { type: "session.start", id: uid(), sessionId: s, agent: "writer", model: "m-1", ts: new Date(t).toISOString() },
      { ...result(s, "Read", { file_path: "/a.ts" }, { success: true, result: "x" }), ts: new Date(t + 1500).toISOString() },
    ]);
    expect(res.status).toBe(200);
    const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
    expect(row.startedAt?.toISOString()).toBe("2026-11-20T10:00:00.000Z");
    expect(row.lastEventAt?.toISOString()).toBe("2026-11-20T10:00:01.500Z");
    expect([row.agent, row.model, row.eventCount, row.clock]).toEqual(["writer", "m-1", 2, t + 1500]);
    // Stored in its compact form (storedSessionBehaviour), read back whole.
    expect(row.behaviour).toMatchObject({ v: 3 });
    expect(upgradeSessionBehaviour(row.behaviour, s)).toMatchObject({ version: 2, sessionId: s, seq: 2 });
  });

  it("args over 64 KiB of UTF-8 are refused naming the field, also when few characters carry many bytes", async () => {
    const s = uid("s");
    const euros = "€".repeat(22_000); // 22,000 characters, 66,000 bytes of UTF-8
    const res = await ingest([
      { type: "tool.call", id: uid(), sessionId: s, callId: uid("c"), toolName: "Write", args: { content: "é".repeat(30_000) } }, // 60,000 bytes: accepted
      { type: "tool.call", id: uid(), sessionId: s, callId: uid("c"), toolName: "Write", args: { content: euros } },
    ]);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("events.1.args");
    expect(JSON.stringify(res.body)).not.toContain("events.0.args");
    const left = await app.db.select({ id: event.id }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s)));
    expect(left).toEqual([]);
  });

  if (kind !== "postgres") return;

  /**
   * An app instance on `connections` connections whose sockets log, in order, each statement sent
   * and each answer received (`received`: the bytes of those answers).
   */
  async function wiredInstance(connections = 1) {
    const wire: string[] = [];
    const received = { bytes: 0 };
    const url = new URL(app.database.url!);
    const pg = postgres(app.database.url!, {
      max: connections,
      onnotice: () => {},
      debug: (_conn, text) => void wire.push(`send ${text.trim().replace(/\s+/g, " ").slice(0, 400)}`),
      // postgres-js takes a socket factory (its `socket` option), though its types do not list it.
      ...({
        socket: async () => {
          const socket = net.connect(Number(url.port), url.hostname);
          await once(socket, "connect");
          socket.on("data", (chunk: Buffer) => {
            wire.push("recv");
            received.bytes += chunk.length;
          });
          return socket;
        },
      } as object),
    });
    const database: Database = { db: drizzle(preparingClient(pg), { schema }) as unknown as Db, kind: "postgres", pg, url: app.database.url, close: () => pg.end({ timeout: 5 }) };
    return { wire, received, database, instance: await TestApp.create(database) };
  }
  const failed = (s: string, path = "a") => result(s, "http_request", { url: `https://svc.example.com/${path}` }, { success: false, error: "503 Service Unavailable", httpStatus: 503 });
  /** The COMMIT is the next thing sent after the last trust-phase write (the daily roll-ups), before any answer. */
  const expectCommitBehindWrites = (wire: string[]) => {
    const stat = wire.findLastIndex((w) => w.startsWith('send insert into "daily_'));
    expect(stat, wire.join("\n")).toBeGreaterThan(0);
    expect(wire.slice(stat + 1, stat + 2), wire.join("\n")).toEqual(["send commit"]);
  };

  it("the trust states stay locked for one round trip: the timeline read goes behind the lock, the COMMIT behind the writes", async () => {
    const { wire, database, instance } = await wiredInstance();
    try {
      // A first batch prepares the statements on the connection (postgres-js waits for a new
      // statement's description before sending anything behind it).
      expect((await instance.mutation("ingest.events", { events: [failed(uid("s"))] }, { key: ws.key })).status).toBe(200);
      wire.length = 0;
      const s = uid("s");
      const res = await instance.mutation("ingest.events", { events: [failed(s)] }, { key: ws.key });
      expect(res.status).toBe(200);
      expectCommitBehindWrites(wire);
      // The read of the sessions session decay needs goes right behind the trust-state lock; the
      // histories this instance holds name them, so it asks for them by id (no history unpacked).
      const lock = wire.findLastIndex((w) => w.startsWith("send select k.failure_key, k.xmin::text as version"));
      expect(lock, wire.join("\n")).toBeGreaterThan(0);
      expect(wire[lock + 1], wire.join("\n")).toMatch(/^send with failed as \(select \* from unnest\(\$1::text\[\], \$2::text\[\]\) as f\(session_id, agent\)\), named as \( select s\.session_id/);
      expect(wire.slice(lock).filter((w) => w.includes("record->>'sessionId'")), wire.join("\n")).toEqual([]);
      // And the batch is there.
      const stored = await app.db.select({ failed: event.failed }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s)));
      expect(stored).toEqual([{ failed: true }]);
    } finally {
      await database.close();
    }
  });

  /** Waits until `n` trust-state locks wait for a row. */
  const waitingLocks = async (n: number) => {
    for (let i = 0; i < 200; i++) {
      const [{ waiting }] = rowsOf<{ waiting: number }>(await app.db.execute(sql`select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and query like 'select k.failure_key%'`));
      if (waiting >= n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${n} lock(s) never waited`);
  };

  /**
   * Another client takes the key's row (FOR UPDATE) and holds it until `release()`; `then` runs in
   * its transaction before it commits. Resolves once the row is held; `done` once committed.
   */
  async function holdKeyRow(workspaceId: string, key: string, then?: (tx: Parameters<Parameters<Db["transaction"]>[0]>[0]) => Promise<unknown>) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const done = app.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from key_state where workspace_id = ${workspaceId} and failure_key = ${key} for update`);
      held();
      await gate;
      await then?.(tx);
    });
    await holding;
    return { release, done };
  }

  /** The key's stored trust state and failures (their records as one JSON text). */
  const storedKey = async (workspaceId: string, key: string) => {
    const [row] = await app.db.select({ trust: keyState.trust }).from(keyState).where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, key)));
    const [{ failures }] = rowsOf<{ failures: string }>(
      await app.db.execute(sql`select coalesce(jsonb_agg(record order by seq), '[]')::text as failures from key_failure where workspace_id = ${workspaceId} and failure_key = ${key}`),
    );
    return { ...row, failures };
  };

  it("a placeholder row a batch inserts is not held in memory under its xmin: the batch's own write is the next version of that xmin", async () => {
    const w = await app.seedWorkspace();
    const created = { failureKey: "@tool:placeholder_probe", toolName: "placeholder_probe", domain: null };
    const existing = result("s-probe", "placeholder_probe", { q: 1 }, { success: true });
    expect((await app.mutation("ingest.events", { events: [existing] }, { key: w.key })).status).toBe(200);
    const existingKey = (await app.db.select().from(keyState).where(eq(keyState.workspaceId, w.workspaceId)))[0].failureKey;
    await app.db
      .transaction(async (tx) => {
        const locked = await lockKeyStates(tx, w.workspaceId, [created], [existingKey], { agents: [], since: null }, app.db);
        expect([...locked.created]).toEqual([created.failureKey]);
        // Another batch of this process asking now would be given this version's documents as
        // held, and the row it finds after this commit carries the same xmin with other contents.
        expect(keyContexts.get(app.db, w.workspaceId, created.failureKey)).toBeUndefined();
        // A row another transaction wrote is held as read.
        expect(keyContexts.get(app.db, w.workspaceId, existingKey)?.value.state.totalCalls).toBe(1);
        throw new Error("rollback");
      })
      .catch((err: Error) => expect(err.message).toBe("rollback"));
  });

  it("a lock queued behind another batch of the same instance gets the trust state without its history: that batch's answer gave it", async () => {
    const w = await app.seedWorkspace();
    // High thresholds: the failures stay in the history without escalating anything (an escalation
    // rewrites effective states, which is another version this instance does not hold).
    expect((await app.mutation("config.put", { tool_rules: { http_request: { count_threshold: 100_000, consecutive_threshold: 100_000 } } }, { key: w.key })).status).toBe(200);
    const { received, database, instance } = await wiredInstance(2);
    const key = "http_request|domain=svc.example.com|path_prefix=a";
    try {
      const post = (events: unknown[]) => instance.mutation("ingest.events", { events }, { key: w.key });
      // A history of 300 failures, tens of KB as text.
      expect((await post(Array.from({ length: 300 }, (_, i) => failed(`big-${i % 10}`)))).status).toBe(200);
      const stored = await storedKey(w.workspaceId, key);
      expect(stored.failures.length).toBeGreaterThan(20_000);

      // Another client holds the key's row; batch A queues its lock behind it, then batch B (same
      // instance) behind A. B asks while A has not written yet, so the version B holds is the one
      // A is about to replace.
      const other = await holdKeyRow(w.workspaceId, key);
      const a = post([failed("a-1"), failed("a-2")]);
      await waitingLocks(1);
      const before = received.bytes;
      const b = post([failed("b-1")]);
      await waitingLocks(2);
      other.release();
      await other.done;
      expect((await a).status).toBe(200);
      expect((await b).status).toBe(200);
      // Everything B received, A's commit included, is far smaller than the history it did not need.
      expect(received.bytes - before).toBeLessThan(stored.failures.length / 2);
      // And B counted from the state A left: 300 + 2 + 1 failures.
      const after = await storedKey(w.workspaceId, key);
      expect(after.trust).toMatchObject({ totalFailures: 303, totalCalls: 303 });
      expect(JSON.parse(after.failures)).toHaveLength(303);
    } finally {
      await database.close();
    }
  });

  it("a lock queued behind a batch of the same instance that never wrote reads the row as it is", async () => {
    const w = await app.seedWorkspace();
    const { database, instance } = await wiredInstance(2);
    const key = "http_request|domain=svc.example.com|path_prefix=a";
    try {
      const post = (events: unknown[]) => instance.mutation("ingest.events", { events }, { key: w.key });
      expect((await post([failed("x-1"), failed("x-2")])).status).toBe(200);
      // Another client takes the row; batch A queues behind it, batch B behind A (B leaves the
      // documents to A's answer). A's lock is then cancelled before it is granted anything, and
      // the other client clears the history: B is granted a version this instance never held.
      const other = await holdKeyRow(w.workspaceId, key, async (tx) => {
        await tx.execute(sql`update key_state set tool_name = tool_name where workspace_id = ${w.workspaceId} and failure_key = ${key}`);
        await tx.execute(sql`delete from key_failure where workspace_id = ${w.workspaceId} and failure_key = ${key}`);
      });
      const a = post([failed("a-1")]);
      await waitingLocks(1);
      const b = post([failed("b-1")]);
      await waitingLocks(2);
      await app.db.execute(sql`select pg_cancel_backend(pid) from (select pid from pg_stat_activity where wait_event_type = 'Lock' and query like 'select k.failure_key%' order by query_start limit 1) first_waiter`);
      expect((await a).status).not.toBe(200);
      other.release();
      await other.done;
      expect((await b).status).toBe(200);
      // B counted from the cleared history (one failure), not from the two this instance held.
      expect(JSON.parse((await storedKey(w.workspaceId, key)).failures)).toHaveLength(1);
    } finally {
      await database.close();
    }
  });

  it("the decay timeline reads the failures' sessions and the starts after their ends, not every session of their agents", async () => {
    const w = await app.seedWorkspace();
    const base = Date.now() - 50 * 60_000;
    const at = (m: number) => new Date(base + m * 60_000).toISOString();
    const args = { url: "https://timeline.example.com/v1/x" };
    const key = "http_request|domain=timeline.example.com|path_prefix=v1";
    const post = async (events: unknown[]) => expect((await app.mutation("ingest.events", { events }, { key: w.key })).status).toBe(200);
    const start = (sessionId: string, m: number, agent = "fleet") => ({ type: "session.start", id: uid(), sessionId, agent, ts: at(m) });
    const outcome = (sessionId: string, ok: boolean, m: number) => ({ type: "tool.result", id: uid(), sessionId, callId: uid(), toolName: "http_request", args, ...(ok ? { success: true } : { success: false, httpStatus: 503 }), ts: at(m) });
    // A session of the fleet's agent fails and keeps running; 30 more of its sessions start.
    await post([start("running", 0), outcome("running", false, 1)]);
    await post(Array.from({ length: 30 }, (_, i) => start(`busy-${i}`, 2 + i / 10)));
    // Another fails and ends; two start after that end (one of another agent).
    await post([start("done", 10), outcome("done", false, 11), { type: "session.end", id: uid(), sessionId: "done", ts: at(12) }]);
    await post([start("after-1", 13), start("after-2", 14), start("other", 14, "other")]);
    await post([outcome("running", true, 15)]);
    // running: not ended, counts 1; done: crossed by after-1 and after-2 only.
    const status = await app.query("reliability.status", { toolName: "http_request" }, { key: w.key });
    const k = status.body.result!.data.keys.find((x: { failureKey: string }) => x.failureKey === key);
    expect(k.effectiveFailures).toBeCloseTo(1 + 0.8 ** 2, 9);
    // The read itself, by the failures' sessions and from the key rows: the failing session that
    // ended and the starts after its end — not the one still running (nothing decays it yet), nor
    // the sessions of the agent that started before that end.
    const ids = (rows: { sessionId: string }[]) => rows.map((r) => r.sessionId).sort();
    const failedIn = (...ids: string[]) => ({ ids, agents: ids.map(() => "fleet") });
    const byId = await app.db.transaction((tx) => timelineOfSessions(tx, w.workspaceId, failedIn("running", "done"), { agents: [], since: null }));
    expect(ids(byId)).toEqual(["after-1", "after-2", "done"]);
    const byKeys = await app.db.transaction((tx) => timelineOfKeys(tx, w.workspaceId, [key], { agents: [], since: null }));
    expect(ids(byKeys)).toEqual(["after-1", "after-2", "done"]);
    // A batch session that had ended before its batch: the starts of its agent after its end.
    const ended = await app.db.transaction((tx) => timelineOfSessions(tx, w.workspaceId, failedIn(), { agents: ["other", "fleet"], since: base + 13.5 * 60_000 }));
    expect(ids(ended)).toEqual(["after-2", "other"]);
    // A failure decays by the starts of the agent it was recorded under, even once its session
    // was started again under another name and ended.
    await post([start("moved", 20), outcome("moved", false, 21), start("moved", 22, "renamed"), { type: "session.end", id: uid(), sessionId: "moved", ts: at(23) }, start("fleet-after", 24), start("renamed-after", 24, "renamed")]);
    const moved = await app.db.transaction((tx) => timelineOfKeys(tx, w.workspaceId, [key], { agents: [], since: null }));
    expect(ids(moved)).toEqual(["after-1", "after-2", "done", "fleet-after", "moved"]);
  });

  describe("session decay over histories another instance changed", () => {
    const url = "https://decay.example.com/v1/x";
    const key = "http_request|domain=decay.example.com|path_prefix=v1";
    const at = (base: number, m: number) => new Date(base + m * 60_000).toISOString();
    const start = (id: string, sessionId: string, agent: string, ts: string) => ({ type: "session.start", id, sessionId, agent, ts });
    const end = (id: string, sessionId: string, ts: string) => ({ type: "session.end", id, sessionId, ts });
    const outcome = (id: string, sessionId: string, ok: boolean, ts: string) => ({ type: "tool.result", id, sessionId, callId: id, toolName: "http_request", args: { url }, ...(ok ? { success: true } : { success: false, httpStatus: 503 }), ts });
    const effective = async (w: typeof ws) =>
      (await app.query("reliability.status", { toolName: "http_request" }, { key: w.key })).body.result!.data.keys.find((k: { failureKey: string }) => k.failureKey === key).effectiveFailures as number;

    // `instance` holds the key's history with one failure; `app`, another instance, then adds a
    // failure of a session that ended, after which two sessions of that agent started: that
    // failure counts 0.8² — if the instance that decides next knows the session.
    async function scenario(lateAgent: string) {
      const w = await app.seedWorkspace();
      const base = Date.now() - 50 * 60_000;
      const { database, instance } = await wiredInstance();
      try {
        const post = async (on: TestApp, events: unknown[]) => expect((await on.mutation("ingest.events", { events }, { key: w.key })).status).toBe(200);
        await post(instance, [start(uid(), "held", "x", at(base, 10)), outcome(uid(), "held", false, at(base, 11))]);
        // Started before the held failure: not among the sessions of agent x since that failure.
        await post(app, [start(uid(), "late", lateAgent, at(base, 0)), outcome(uid(), "late", false, at(base, 12)), end(uid(), "late", at(base, 13))]);
        await post(app, [start(uid(), "after-1", lateAgent, at(base, 14)), start(uid(), "after-2", lateAgent, at(base, 15))]);
        await post(instance, [start(uid(), "next", "x", at(base, 16)), outcome(uid(), "next", true, at(base, 17))]);
        // held: not ended, counts 1; late: crossed by after-1 and after-2 (and next, if of its agent).
        return { effective: await effective(w), crossed: lateAgent === "x" ? 3 : 2 };
      } finally {
        await database.close();
      }
    }

    it("a failure of a session the held history did not name: the session is read after the lock", async () => {
      const { effective: e, crossed } = await scenario("x");
      expect(e).toBeCloseTo(1 + 0.8 ** crossed, 9);
    });

    it("a failure of an agent the held history did not name: the whole timeline is read after the lock", async () => {
      const { effective: e, crossed } = await scenario("y");
      expect(e).toBeCloseTo(1 + 0.8 ** crossed, 9);
    });
  });

  it("a batch with effects worth notifying also sends its COMMIT right behind its writes: the channels were read with its first reads", async () => {
    const { wire, database, instance } = await wiredInstance();
    try {
      // Three server errors escalate a key: an effect the notification outbox is asked about. The
      // first such batch prepares its statements on the connection (transitions included).
      const w = uid("s");
      expect((await instance.mutation("ingest.events", { events: [failed(w, "w/1"), failed(w, "w/2"), failed(w, "w/3")] }, { key: ws.key })).status).toBe(200);
      wire.length = 0;
      const s = uid("s");
      const res = await instance.mutation("ingest.events", { events: [failed(s, "b/1"), failed(s, "b/2"), failed(s, "b/3")] }, { key: ws.key });
      expect(res.status).toBe(200);
      expect(res.body.result?.data.effects.map((e: { type: string }) => e.type)).toContain("escalated");
      expectCommitBehindWrites(wire);
      const lock = wire.findLastIndex((w) => w.startsWith("send select k.failure_key, k.xmin::text as version"));
      expect(wire.slice(lock).filter((w) => w.includes("notification_channel")), wire.join("\n")).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

/**
 * The hot path of guard.check (issue 15): at most two database round trips for the common answer,
 * API keys and configuration from memory, and a revocation or config.put seen by the very next
 * request on every app instance (two database clients on one PostgreSQL = two instances).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, inArray, sql } from "drizzle-orm";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import * as schema from "@/db/schema";
import { agentSession, apiKey, event, keyState } from "@/db/schema";
import { rowsOf, type Database, type Db } from "@/db/client";
import { DATABASE_KINDS } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { preparingClient } from "@/db/prepared-client";
import { handleHookRequest } from "@/server/agent-api/hooks";
import { sessionSnapshots, trustStates } from "@/server/ingest/row-version-cache";
import { upgradeSessionBehaviour } from "@/server/engine/behaviour-state";
import { cachedConfigs } from "@/server/services/config-cache";
import { WRITE_CHECKS, WRITE_ONE_STORED_CHECK } from "@/server/ingest/guard-lean";

/** Another app instance on the same PostgreSQL database, with a client of its own. */
async function instanceOn(url: string, options: postgres.Options<Record<string, never>>) {
  const pg = postgres(url, { onnotice: () => {}, ...options });
  const database: Database = { db: drizzle(pg, { schema }) as unknown as Db, kind: "postgres", pg, url, close: () => pg.end({ timeout: 5 }) };
  return { app: await TestApp.create(database), database };
}

/** A second app instance whose client counts the statements it sends. */
async function countingInstance(url: string) {
  const counter = { statements: 0, texts: [] as string[], params: [] as unknown[][] };
  // One connection: every statement, BEGIN and COMMIT included, is a round trip on it.
  const instance = await instanceOn(url, {
    max: 1,
    debug: (_conn, text, params) => {
      counter.statements += 1;
      counter.texts.push(text);
      counter.params.push(params);
    },
  });
  return { ...instance, counter };
}

const call = (sessionId: string, toolName: string, args: Record<string, unknown>) => ({ id: uid(), sessionId, callId: uid(), toolName, args });

/** The session row's version (`xmin`) and its stored behaviour. */
async function storedSession(db: Db, workspaceId: string, sessionId: string) {
  const [row] = await db
    .select({ version: sql<string>`${agentSession}.xmin::text`, behaviour: agentSession.behaviour })
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, sessionId)));
  return { version: row.version, behaviour: upgradeSessionBehaviour(row.behaviour, sessionId) };
}

describe.each(DATABASE_KINDS)("guard.check hot path on %s", (kind) => {
  const app = useTestApp(kind);

  // Citus plans the statement on its workers, per shard: the plan it shows is its own.
  it.skipIf(kind === "citus")("the write statements reach each session by its key in the plans they keep as the table grows", async () => {
    // A prepared statement keeps a generic plan, made without the values: its lock, a `session_id =
    // any(…)` filter, read every session of the workspace (or, in the bench, the whole table) for
    // every batch once the table had grown, ~10 % of PostgreSQL's time per check within minutes.
    const { key, workspaceId } = await app.seedWorkspace();
    await app.mutation("guard.check", call(uid("s"), "read_file", { path: "/p" }), { key });
    // Sessions of a workspace grow by the thousand before statistics catch up.
    await app.db.execute(sql`insert into agent_session (workspace_id, session_id) select ${workspaceId}, 'grown-' || i from generate_series(1, 2000) i`);
    const [lines, oneLines] = [await genericPlan(WRITE_CHECKS.text()), await genericPlan(WRITE_ONE_STORED_CHECK.text())];
    await app.db.execute(sql`delete from agent_session where workspace_id = ${workspaceId} and session_id like 'grown-%'`);
    // The lock (the CTE `locked`) probes the key by each session's id: not the workspace's sessions
    // filtered one by one, nor the whole table. Nothing reads the whole table.
    const locked = lines.slice(lines.findIndex((l) => /CTE locked/.test(l)), lines.findIndex((l) => /CTE upd/.test(l)));
    const scans = locked.flatMap((l, i) => (/Scan .*on agent_session/.test(l) ? [`${l.trim()} | ${locked[i + 1]?.trim()}`] : []));
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatch(/^-> +Index (Only )?Scan using agent_session_workspace_id_session_id_pk .*\| Index Cond: .*session_id = /);
    expect(lines.filter((l) => /Seq Scan on agent_session/.test(l))).toEqual([]);
    // The one-check statement updates its one session by its key, likewise.
    const oneScans = oneLines.flatMap((l, i) => (/Scan .*on agent_session/.test(l) ? [`${l.trim()} | ${oneLines[i + 1]?.trim()}`] : []));
    expect(oneScans).toHaveLength(1);
    expect(oneScans[0]).toMatch(/^-> +Index Scan using agent_session_workspace_id_session_id_pk .*\| Index Cond: .*session_id = /);
  });

  /** The plan PostgreSQL keeps for a prepared statement (the generic plan, made without the values), as lines. */
  async function genericPlan(text: string) {
    const params = new Set(text.match(/\$\d+/g)).size;
    const plan = await app.db.transaction(async (tx) => {
      await tx.execute(sql.raw("set local plan_cache_mode = force_generic_plan"));
      await tx.execute(sql.raw(`prepare write_checks_plan as ${text}`));
      try {
        return rowsOf<Record<string, string>>(await tx.execute(sql.raw(`explain (costs off) execute write_checks_plan(${Array(params).fill("null").join(", ")})`)));
      } finally {
        await tx.execute(sql.raw("deallocate write_checks_plan"));
      }
    });
    return plan.map((r) => Object.values(r)[0]);
  }

  it("records the call exactly once and keeps session counters exact under concurrent calls of one session", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const calls = Array.from({ length: 12 }, (_, i) => call(s, "read_file", { path: `/src/f${i}.ts` }));
    const answers = await Promise.all(calls.map((c) => app.mutation("guard.check", c, { key })));
    expect(answers.map((a) => a.body.result?.data.decision)).toEqual(calls.map(() => "allow"));
    // The same call again (a client retry) is answered and not recorded twice.
    const again = await app.mutation("guard.check", calls[0], { key });
    expect(again.body.result!.data.decision).toBe("allow");
    const rows = await app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, s)));
    expect(rows.map((r) => r.id).sort()).toEqual(calls.map((c) => c.id).sort());
    const keyOf = new Map(calls.map((c, i) => [c.id, answers[i].body.result!.data.failureKey]));
    expect(rows.every((r) => r.type === "tool.call" && r.failureKey === keyOf.get(r.id))).toBe(true);
    const [session] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, s)));
    expect(session).toMatchObject({ eventCount: 12, callCount: 12 });
  });

  it("records a call with what ingest records for the same call: failure key, key params, args hash, domain, command", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const calls = [
      call(uid("g"), "http_request", { url: "https://api.example.com/v2/orders/81723?x=1", method: "POST", body: { a: 1 } }),
      call(uid("g"), "Bash", { command: "npm test -- --run src/a.test.ts", timeout: 60 }),
      call(uid("g"), "mcp__jira__search", { jql: "project = OPS", limit: 5 }),
      call(uid("g"), "Read", { file_path: "/repo/src/index.ts" }),
    ];
    // The guard's session is a new one (the full path) for the first check and a stored one (the lean path) after it.
    for (const c of [...calls, ...calls.map((c) => ({ ...c, id: uid(), callId: uid() }))]) {
      expect((await app.mutation("guard.check", c, { key })).status).toBe(200);
    }
    const ingested = calls.map((c) => ({ ...c, type: "tool.call", id: uid(), sessionId: uid("i") }));
    expect((await app.mutation("ingest.events", { events: ingested }, { key })).status).toBe(200);
    const rows = await app.db.select().from(event).where(eq(event.workspaceId, workspaceId));
    const recorded = (r: (typeof rows)[number]) => ({ toolName: r.toolName, failureKey: r.failureKey, call: (r.payload as { call: unknown }).call, preview: (r.payload as { preview: unknown }).preview });
    const fromIngest = new Map(rows.filter((r) => r.sessionId.startsWith("i")).map((r) => [r.toolName, recorded(r)]));
    const fromGuard = rows.filter((r) => r.sessionId.startsWith("g"));
    expect(fromGuard).toHaveLength(2 * calls.length);
    for (const r of fromGuard) expect(recorded(r)).toEqual(fromIngest.get(r.toolName));
    expect(fromIngest.get("http_request")!.call).toMatchObject({ domain: "api.example.com" });
  });

  it("a revoked key is refused on the very next guard.check, also when it was cached", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    expect((await app.mutation("guard.check", call(s, "read_file", { path: "/a" }), { key: ws.key })).status).toBe(200);
    expect((await app.mutation("guard.check", call(s, "read_file", { path: "/b" }), { key: ws.key })).status).toBe(200);
    // Revoked behind the app's back (another instance, or SQL): the cache must not hide it.
    await app.db.update(apiKey).set({ revokedAt: new Date() }).where(eq(apiKey.workspaceId, ws.workspaceId));
    expect((await app.mutation("guard.check", call(s, "read_file", { path: "/c" }), { key: ws.key })).status).toBe(401);
    expect((await app.mutation("guard.check", call(s, "read_file", { path: "/d" }), { key: ws.key })).status).toBe(401);
  });

  it("a revoked key is refused on the very next ingest.events, also when it was cached, and the batch writes nothing", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    for (const path of ["/a", "/b"]) expect((await app.mutation("ingest.events", { events: [result(s, "read_file", { path }, { success: true })] }, { key: ws.key })).status).toBe(200);
    await app.db.update(apiKey).set({ revokedAt: new Date() }).where(eq(apiKey.workspaceId, ws.workspaceId));
    const refused = await app.mutation("ingest.events", { events: [result(s, "read_file", { path: "/c" }, { success: true })] }, { key: ws.key });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.message).toBe("Invalid or revoked API key");
    expect(await app.db.select().from(event).where(eq(event.workspaceId, ws.workspaceId))).toHaveLength(2);
    expect((await app.mutation("ingest.events", { events: [result(s, "read_file", { path: "/d" }, { success: true })] }, { key: ws.key })).status).toBe(401);
  });

  it("checks of many sessions arriving together are each recorded exactly once, a racing retry of one of them included", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    // 61 requests: within the default capacity of one instance (64 at once), so none is refused.
    const sessions = Array.from({ length: 30 }, () => uid("s"));
    // Two calls per session, sent together: the second of a session never shares a write with the first.
    const calls = sessions.flatMap((s, i) => [call(s, "read_file", { path: `/src/a${i}.ts` }), call(s, "read_file", { path: `/src/b${i}.ts` })]);
    // A client retry of one call, racing with the original in the same moment.
    const sent = [...calls, calls[7]];
    const answers = await Promise.all(sent.map((c) => app.mutation("guard.check", c, { key })));
    expect(answers.filter((a) => a.status !== 200).map((a) => JSON.stringify(a.body).slice(0, 300))).toEqual([]);
    expect(answers.every((a) => a.body.result?.data.decision === "allow")).toBe(true);
    const rows = await app.db.select({ id: event.id, sessionId: event.sessionId }).from(event).where(eq(event.workspaceId, workspaceId));
    expect(rows.map((r) => r.id).sort()).toEqual(calls.map((c) => c.id).sort());
    const stored = await app.db.select().from(agentSession).where(eq(agentSession.workspaceId, workspaceId));
    expect(stored).toHaveLength(30);
    expect(stored.every((s) => s.eventCount === 2 && s.callCount === 2)).toBe(true);
  });

  it("a session's behaviour is kept in memory under the row version its write made, and read again once ingest changed the row", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const [c1, c2, c3] = [1, 2, 3].map((i) => call(s, "read_file", { path: `/src/f${i}.ts` }));
    for (const c of [c1, c2]) expect((await app.mutation("guard.check", c, { key })).body.result?.data.decision).toBe("allow");
    let stored = await storedSession(app.db, workspaceId, s);
    const held = sessionSnapshots.get(app.db, workspaceId, s);
    expect(held?.version).toBe(stored.version);
    expect(held?.value.behaviour).toEqual(stored.behaviour);
    // The result of c1 goes through ingest (the full path): the row changes, the memory does not.
    const ingested = await app.mutation("ingest.events", { events: [result(s, "read_file", c1.args, { success: false, error: "ENOENT: no such file" }, { callId: c1.callId })] }, { key });
    expect(ingested.status).toBe(200);
    expect((await storedSession(app.db, workspaceId, s)).version).not.toBe(held?.version);
    expect((await app.mutation("guard.check", c3, { key })).body.result?.data.decision).toBe("allow");
    // c3 was decided from the row ingest wrote (c1's outcome kept), not from the document in memory.
    stored = await storedSession(app.db, workspaceId, s);
    expect(stored.behaviour.calls.map((c) => c.callId)).toEqual([c1.callId, c2.callId, c3.callId]);
    expect(stored.behaviour.calls[0].outcome).toMatch(/^F:/);
    expect(sessionSnapshots.get(app.db, workspaceId, s)).toMatchObject({ version: stored.version, value: { behaviour: stored.behaviour } });
  });

  it("a trust state is kept in memory under its row version, and the check right after ingest changed it decides from the new state", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const url = "https://api.example.com/v1/users";
    const failureKey = "http_request|domain=api.example.com|path_prefix=v1";
    const served = (success: boolean) => result(s, "http_request", { url }, success ? { success: true, httpStatus: 200 } : { success: false, httpStatus: 503, error: "Service Unavailable" });
    const check = async () => (await app.mutation("guard.check", call(s, "http_request", { url }), { key })).body.result!.data;
    const stored = async () =>
      (await app.db.select({ version: sql<string>`${keyState}.xmin::text` }).from(keyState).where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, failureKey))))[0].version;
    expect((await app.mutation("ingest.events", { events: [served(true)] }, { key })).status).toBe(200);
    expect(await check()).toMatchObject({ decision: "allow", failureKey, state: "trusted" });
    expect(trustStates.get(app.db, workspaceId, failureKey)).toMatchObject({ version: await stored(), value: { state: "trusted" } });
    expect(await check()).toMatchObject({ decision: "allow", state: "trusted" });
    // Three server errors escalate the key: its row changes, the memory does not.
    expect((await app.mutation("ingest.events", { events: [served(false), served(false), served(false)] }, { key })).status).toBe(200);
    expect(await check()).toMatchObject({ decision: "ask", failureKey, state: "escalated" });
    expect(trustStates.get(app.db, workspaceId, failureKey)).toMatchObject({ version: await stored(), value: { state: "escalated" } });
  });

  if (kind !== "postgres") return;

  describe("two app instances on one PostgreSQL", () => {
    let other: Awaited<ReturnType<typeof countingInstance>>;
    beforeAll(async () => {
      other = await countingInstance(app.database.url!);
    });
    afterAll(async () => {
      await other.database.close();
    });

    it("a session changed by another instance is read again in full; one this instance wrote last is not sent back", async () => {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      const calls = [1, 2, 3, 4, 5, 6].map((i) => call(s, "read_file", { path: `/src/f${i}.ts` }));
      const check = async (on: TestApp, c: (typeof calls)[number]) => expect((await on.mutation("guard.check", c, { key: ws.key })).body.result?.data.decision).toBe("allow");
      const readsOf = (from: number) => other.counter.texts.slice(from).map((t, i) => ({ t, params: other.counter.params[from + i] })).filter((x) => x.t.includes("x.held"));
      await check(other.app, calls[0]);
      await check(app, calls[1]);
      // The other instance wrote the session since: the next check reads it, and gets the document back.
      let before = other.counter.texts.length;
      await check(other.app, calls[2]);
      expect(readsOf(before)).toHaveLength(1);
      const mine = sessionSnapshots.get(other.database.db, ws.workspaceId, s)!;
      expect(mine.version).toBe((await storedSession(app.db, ws.workspaceId, s)).version);
      expect(mine.value.settled).toBe(false); // it had changed behind this instance's back: read again next time
      // The next read sends the version this instance holds; the answer leaves the document out.
      before = other.counter.texts.length;
      await check(other.app, calls[3]);
      const [read] = readsOf(before);
      expect(read.params).toContain(`{"${mine.version}"}`);
      // Found as this instance left it: from now on its checks decide from memory, without a read.
      expect(sessionSnapshots.get(other.database.db, ws.workspaceId, s)!.value.settled).toBe(true);
      before = other.counter.texts.length;
      await check(other.app, calls[4]);
      expect(readsOf(before)).toHaveLength(0);
      // Until someone else writes it again: that write makes the assumed one write nothing, and the check reads.
      await check(app, calls[5]);
      const seventh = call(s, "read_file", { path: "/src/f7.ts" });
      before = other.counter.texts.length;
      await check(other.app, seventh);
      expect(readsOf(before)).toHaveLength(1);
      const stored = await storedSession(app.db, ws.workspaceId, s);
      expect(stored.behaviour.calls.map((c) => c.callId)).toEqual([...calls, seventh].map((c) => c.callId));
      expect(sessionSnapshots.get(other.database.db, ws.workspaceId, s)).toMatchObject({ version: stored.version, value: { behaviour: stored.behaviour } });
      const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
      expect(row).toMatchObject({ eventCount: 7, callCount: 7 });
    });

    it("a session only this instance writes is decided from memory: one round trip per check", async () => {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      // The first check reads (the session is new to this instance), and warms the statements.
      await other.app.mutation("guard.check", call(s, "read_file", { path: "/w" }), { key: ws.key });
      for (let i = 0; i < 5; i++) {
        const before = other.counter.statements;
        const res = await other.app.mutation("guard.check", call(s, "http_request", { url: `https://api.example.com/v1/items/${i}` }), { key: ws.key });
        expect(res.body.result?.data).toMatchObject({ decision: "allow", state: "trusted" });
        const sent = other.counter.texts.slice(before);
        expect(sent, sent.join("\n---\n")).toHaveLength(1);
        // One check of a stored session: the statement without lock ordering and session creation.
        expect(sent[0]).toBe(WRITE_ONE_STORED_CHECK.text());
      }
      const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
      expect(row).toMatchObject({ eventCount: 6, callCount: 6 });
    });

    it("a session new to this instance is created by its first check's one write; one another instance began is read after it", async () => {
      const ws = await app.seedWorkspace();
      await other.app.mutation("guard.check", call(uid("s"), "read_file", { path: "/warm" }), { key: ws.key });
      const sent = async (s: string, path: string) => {
        const before = other.counter.statements;
        const res = await other.app.mutation("guard.check", call(s, "read_file", { path }), { key: ws.key });
        expect(res.body.result?.data).toMatchObject({ decision: "allow" });
        return other.counter.texts.slice(before);
      };
      const fresh = uid("s");
      expect(await sent(fresh, "/a")).toEqual([WRITE_CHECKS.text()]); // the statement that can create it
      expect(await sent(fresh, "/b")).toEqual([WRITE_ONE_STORED_CHECK.text()]);
      // Begun on the other instance: this one's insert finds the row and writes nothing, then it reads and writes.
      const theirs = uid("s");
      await app.mutation("guard.check", call(theirs, "read_file", { path: "/a" }), { key: ws.key });
      const statements = await sent(theirs, "/b");
      expect(statements.filter((t) => t.includes("x.held"))).toHaveLength(1);
      expect(statements.filter((t) => t.includes("json_to_recordset"))).toHaveLength(2);
      // And it is not taken for new again: read first (it was changed behind this instance's back).
      await app.mutation("guard.check", call(theirs, "read_file", { path: "/c" }), { key: ws.key });
      expect((await sent(theirs, "/d")).filter((t) => t.includes("json_to_recordset"))).toHaveLength(1);
      const rows = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), inArray(agentSession.sessionId, [fresh, theirs])));
      expect(Object.fromEntries(rows.map((r) => [r.sessionId, [r.eventCount, r.callCount]]))).toEqual({ [fresh]: [2, 2], [theirs]: [4, 4] });
    });

    describe("a check decided from memory is written only if what it assumed still holds", () => {
      /** A workspace and a session this instance has checked twice, so that it now decides from memory. */
      async function settledSession() {
        const ws = await app.seedWorkspace();
        const s = uid("s");
        for (const path of ["/a", "/b"]) expect((await other.app.mutation("guard.check", call(s, "read_file", { path }), { key: ws.key })).status).toBe(200);
        expect(sessionSnapshots.get(other.database.db, ws.workspaceId, s)?.value.settled).toBe(true);
        const check = async (toolName: string, args: Record<string, unknown>, c = call(s, toolName, args)) => {
          const res = await other.app.mutation("guard.check", c, { key: ws.key });
          return { status: res.status, data: res.body.result?.data };
        };
        const calls = async () => (await app.db.select({ id: event.id }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s), eq(event.type, "tool.call")))).length;
        return { ws, s, check, calls };
      }

      // The results come from another session: this one's row stays as the instance wrote it, so
      // only the condition on the trust states can stop the write.
      it("its key escalated by ingest on another instance: ask", async () => {
        const { ws, check } = await settledSession();
        const url = "https://api.example.com/v1/users";
        const failed = () => result(uid("s"), "http_request", { url }, { success: false, httpStatus: 503, error: "Service Unavailable" });
        expect((await app.mutation("ingest.events", { events: [failed(), failed(), failed()] }, { key: ws.key })).status).toBe(200);
        expect((await check("http_request", { url })).data).toMatchObject({ decision: "ask", state: "escalated" });
      });

      it("its tool blocked (a level state, e.g. by a security block): the key under it answers as the tool", async () => {
        const { ws, check, calls } = await settledSession();
        const denied = result(uid("s"), "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" });
        expect((await app.mutation("ingest.events", { events: [denied] }, { key: ws.key })).status).toBe(200);
        expect((await check("bash", { command: "ls -la" })).data).toMatchObject({ decision: "ask", failureKey: "bash|command=ls", state: "blocked" });
        expect(await calls()).toBe(3); // recorded once, by the full path that asks
      });

      it("a global pattern of its tool: ask", async () => {
        const { ws, check } = await settledSession();
        await app.db.execute(sql`insert into global_tool_pattern (organization_id, tool_name, status, workspace_ids, avg_failure_rate, detected_at)
          values (${ws.organizationId}, 'read_file', 'active', '[]'::jsonb, 0.9, now())`);
        const answer = (await check("read_file", { path: "/c" })).data;
        expect(answer).toMatchObject({ decision: "ask" });
        expect(answer?.reason).toMatch(/global tool pattern/);
      });

      it("the session paused behind its back: pause", async () => {
        const { ws, s, check } = await settledSession();
        await app.db.update(agentSession).set({ paused: true, pauseReason: "Paused by a person" }).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
        expect((await check("read_file", { path: "/c" })).data).toMatchObject({ decision: "pause", reason: "Paused by a person" });
      });

      it("its API key revoked: 401, nothing recorded", async () => {
        const { ws, check, calls } = await settledSession();
        await app.db.update(apiKey).set({ revokedAt: new Date() }).where(eq(apiKey.workspaceId, ws.workspaceId));
        expect((await check("read_file", { path: "/c" })).status).toBe(401);
        expect(await calls()).toBe(2);
      });

      it("the configuration changed: read again, and held from then on", async () => {
        const { ws, check } = await settledSession();
        const before = cachedConfigs(other.database.db, ws.workspaceId)!.fingerprint;
        expect((await app.mutation("config.put", { settings: { blocked_decision: "deny" } }, { key: ws.key })).status).toBe(200);
        const sent = other.counter.texts.length;
        expect((await check("read_file", { path: "/c" })).data).toMatchObject({ decision: "allow" });
        expect(other.counter.texts.slice(sent).some((t) => t.includes("x.held"))).toBe(true);
        const after = cachedConfigs(other.database.db, ws.workspaceId)!;
        expect(after.fingerprint).not.toBe(before);
        expect(after.workspaceDoc.settings).toMatchObject({ blockedDecision: "deny" });
      });

      it("a repeated call (the same event id): answered, recorded once", async () => {
        const { ws, s, check, calls } = await settledSession();
        const c = call(s, "read_file", { path: "/c" });
        expect((await check("read_file", {}, c)).data).toMatchObject({ decision: "allow" });
        expect((await check("read_file", {}, c)).data).toMatchObject({ decision: "allow" });
        expect(await calls()).toBe(3);
        const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
        expect(row).toMatchObject({ eventCount: 3, callCount: 3 });
      });
    });

    it("the common answer takes at most 2 round trips, with the key and the configuration from memory", async () => {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      // Warm-up: caches the key and the configuration, and prepares the statements on the connection.
      for (const path of ["/w1", "/w2", "/w3"]) await other.app.mutation("guard.check", call(s, "read_file", { path }), { key: ws.key });
      for (const [toolName, args] of [
        ["read_file", { path: "/src/index.ts" }],
        ["http_request", { url: "https://api.example.com/v1/users" }],
        ["bash", { command: "ls -la" }],
      ] as const) {
        for (let i = 0; i < 2; i++) {
          const before = other.counter.statements;
          const res = await other.app.mutation("guard.check", call(s, toolName, { ...args }), { key: ws.key });
          expect(res.body.result?.data).toMatchObject({ decision: "allow", state: "trusted" });
          const sent = other.counter.texts.slice(before);
          expect(sent.length, sent.join("\n---\n")).toBeLessThanOrEqual(2);
        }
      }
      const [session] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
      expect(session.callCount).toBe(9);
    });

    it("a coding agent's PreToolUse hook of a known session takes guard.check's 2 round trips", async () => {
      const ws = await app.seedWorkspace();
      const session = uid("cc");
      const preToolUse = (n: number) =>
        handleHookRequest(
          new Request("http://vigil.test/api/hooks/claude-code", {
            method: "POST",
            headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
            body: JSON.stringify({ session_id: session, hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { file_path: `/src/f${n}.ts` }, tool_use_id: `toolu_${n}` }),
          }),
          other.app.runtime,
          "claude-code",
        );
      // The first records the session's start (agent name) and caches the key.
      expect((await preToolUse(0)).status).toBe(200);
      for (let n = 1; n <= 3; n++) {
        const before = other.counter.statements;
        expect((await preToolUse(n)).status).toBe(200);
        const sent = other.counter.texts.slice(before);
        expect(sent.length, sent.join("\n---\n")).toBeLessThanOrEqual(2);
      }
      const rows = await app.db.select({ type: event.type }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, session)));
      expect(rows.map((r) => r.type).sort()).toEqual(["session.start", "tool.call", "tool.call", "tool.call", "tool.call"]);
      const [stored] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, session)));
      expect(stored).toMatchObject({ agent: "claude-code", callCount: 4 });
    });

    it("a coding agent's PreToolUse right after its PostToolUse (ingest) is decided from memory: one round trip", async () => {
      const ws = await app.seedWorkspace();
      const session = uid("cc");
      const hook = (body: Record<string, unknown>) =>
        handleHookRequest(
          new Request("http://vigil.test/api/hooks/claude-code", {
            method: "POST",
            headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
            body: JSON.stringify({ session_id: session, tool_name: "Read", ...body }),
          }),
          other.app.runtime,
          "claude-code",
        );
      const pre = (n: number) => hook({ hook_event_name: "PreToolUse", tool_input: { file_path: `/src/f${n}.ts` }, tool_use_id: `toolu_${n}` });
      const post = (n: number) =>
        hook({ hook_event_name: "PostToolUse", tool_input: { file_path: `/src/f${n}.ts` }, tool_use_id: `toolu_${n}`, tool_response: { type: "text", file: { filePath: `/src/f${n}.ts`, content: "x" } } });
      // The first PreToolUse records the session's start (ingest), and its check decides from what
      // that left: no read.
      const first = other.counter.statements;
      expect((await pre(0)).status).toBe(200);
      expect(other.counter.texts.slice(first).filter((t) => t.includes("x.held"))).toEqual([]);
      expect((await post(0)).status).toBe(200);
      for (let n = 1; n <= 4; n++) {
        const before = other.counter.statements;
        expect((await pre(n)).status).toBe(200);
        const sent = other.counter.texts.slice(before);
        expect(sent, sent.join("\n---\n")).toHaveLength(1);
        expect((await post(n)).status).toBe(200);
      }
      const rows = await app.db.select({ type: event.type }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, session)));
      expect(rows.filter((r) => r.type === "tool.call")).toHaveLength(5);
      expect(rows.filter((r) => r.type === "tool.result")).toHaveLength(5);
      const [stored] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, session)));
      expect(stored.callCount).toBe(5);
      // The behaviour kept every call with its outcome: the checks from memory lost none of ingest's writes.
      const behaviour = (await storedSession(app.db, ws.workspaceId, session)).behaviour;
      expect(behaviour.calls.map((c) => c.callId)).toEqual([0, 1, 2, 3, 4].map((n) => `toolu_${n}`));
      expect(behaviour.calls.every((c) => typeof c.outcome === "string")).toBe(true);
    });

    it("parallel calls of the same sessions (a coding agent's parallel tools) lock their sessions in one order: no deadlock", async () => {
      // An instance of its own, so that its backends' statistics are flushed when it closes.
      const { app: instance, database } = await instanceOn(app.database.url!, { max: 10, connection: { application_name: "vigil-deadlock-check" } });
      const deadlocks = async () => {
        const [r] = await app.database.pg!`select deadlocks::int as n from pg_stat_database where datname = current_database()`;
        return (r as { n: number }).n;
      };
      const before = await deadlocks();
      const ws = await app.seedWorkspace();
      const sessions = Array.from({ length: 6 }, () => uid("par"));
      // Each round: every session makes 4 calls at once, half of them listed in the reverse order, so
      // that batches on their way together hold the same sessions in different orders.
      for (let round = 0; round < 12; round++) {
        const calls = Array.from({ length: 4 }, (_, k) => (k % 2 ? [...sessions].reverse() : sessions).map((s, j) => call(s, "read_file", { path: `/r${round}/${k}/${j}` }))).flat();
        const answers = await Promise.all(calls.map((c) => instance.mutation("guard.check", c, { key: ws.key })));
        expect(answers.map((a) => a.body.result?.data.decision)).toEqual(calls.map(() => "allow"));
      }
      await database.close();
      // A backend reports its counters as it exits.
      for (let i = 0; i < 100; i++) {
        const [r] = await app.database.pg!`select count(*)::int as n from pg_stat_activity where application_name = 'vigil-deadlock-check'`;
        if ((r as { n: number }).n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await app.database.pg!`select pg_stat_clear_snapshot()`;
      const stored = await app.db.select().from(agentSession).where(eq(agentSession.workspaceId, ws.workspaceId));
      expect(stored.map((s) => s.callCount)).toEqual(sessions.map(() => 48));
      expect(await deadlocks()).toBe(before);
    });

    it("sessions rewritten by guard.check and trust states rewritten by ingest are updated in place (HOT), even on full pages", async () => {
      const ws = await app.seedWorkspace();
      const pg = other.database.pg!;
      // The statistics of this instance's one connection, flushed so that the next statement sees them.
      const updates = async (table: string) => {
        await pg`select pg_stat_force_next_flush()`;
        const [r] = await pg`select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = ${table}`;
        return r as { upd: number; hot: number };
      };
      // Enough sessions and keys to fill their pages before they are rewritten; every event within
      // one minute, so that no update changes the indexed minute of its session.
      const minute = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
      let n = 0;
      const check = (s: string, path: string) => other.app.mutation("guard.check", { ...call(s, "read_file", { path }), ts: minute + n++ }, { key: ws.key });
      const bashResults = (s: string) => Array.from({ length: 24 }, (_, i) => ({ ...result(s, "bash", { command: `tool${i} --flag` }, { success: true }), ts: minute + n++ }));
      const sessions = Array.from({ length: 12 }, () => uid("s"));
      for (const s of sessions) await check(s, "/a");
      await other.app.mutation("ingest.events", { events: bashResults(sessions[0]) }, { key: ws.key });

      const s0 = await updates("agent_session");
      for (let round = 0; round < 4; round++) for (const s of sessions) await check(s, `/f${round}`);
      const s1 = await updates("agent_session");
      expect(s1.upd - s0.upd).toBe(48);
      // Measured: 44 of 48 (without room kept on the pages 34; with last_event_at indexed 0).
      expect(s1.hot - s0.hot).toBeGreaterThanOrEqual(42);

      const k0 = await updates("key_state");
      for (let round = 0; round < 4; round++) await other.app.mutation("ingest.events", { events: bashResults(sessions[1]) }, { key: ws.key });
      const k1 = await updates("key_state");
      expect(k1.upd - k0.upd).toBeGreaterThanOrEqual(4 * 24);
      // Measured: 84 of 96 (without room kept on the pages 21).
      expect(k1.hot - k0.hot).toBeGreaterThanOrEqual(0.8 * (k1.upd - k0.upd));
    });

    it("the decision's read is planned once per connection, not on every check", async () => {
      // As production opens PostgreSQL: statements prepared (db/client.ts), here on one connection,
      // whose prepared statements and plan counters pg_prepared_statements shows.
      const pg = postgres(app.database.url!, { max: 1, onnotice: () => {} });
      const database: Database = { db: drizzle(preparingClient(pg), { schema }) as unknown as Db, kind: "postgres", pg, url: app.database.url, close: () => pg.end({ timeout: 5 }) };
      try {
        const instance = await TestApp.create(database);
        const ws = await app.seedWorkspace();
        for (let i = 0; i < 12; i++) {
          // A session the other instance began: this one reads it (after its write, which assumed it new, was refused).
          const s = uid("s");
          await app.mutation("guard.check", call(s, "read_file", { path: "/src/a.ts" }), { key: ws.key });
          const res = await instance.mutation("guard.check", call(s, "read_file", { path: `/src/f${i}.ts` }), { key: ws.key });
          expect(res.body.result?.data.decision).toBe("allow");
        }
        const statements = await pg<{ statement: string; generic_plans: number; custom_plans: number }[]>`
          select statement, generic_plans::int, custom_plans::int from pg_prepared_statements where statement ~ '^[[:space:]]*with cfg as'`;
        expect(statements).toHaveLength(1);
        // PostgreSQL tries five custom plans, then keeps the generic one if it is no dearer: a
        // statement whose estimates depend on the parameters' values would be planned twelve times.
        expect(statements[0].custom_plans).toBeLessThanOrEqual(5);
        expect(statements[0].generic_plans).toBeGreaterThanOrEqual(7);
      } finally {
        await database.close();
      }
    });

    it("checks that arrive together share their statements (group commit), with every call recorded", async () => {
      const ws = await app.seedWorkspace();
      await other.app.mutation("guard.check", call(uid("s"), "read_file", { path: "/warm" }), { key: ws.key });
      const calls = Array.from({ length: 32 }, (_, i) => call(uid("s"), "read_file", { path: `/src/f${i}.ts` }));
      const before = other.counter.statements;
      const answers = await Promise.all(calls.map((c) => other.app.mutation("guard.check", c, { key: ws.key })));
      expect(answers.every((a) => a.body.result?.data.decision === "allow")).toBe(true);
      // One connection: alone, 32 checks would take 64 statements; together a handful.
      expect(other.counter.statements - before).toBeLessThanOrEqual(8);
      const rows = await app.db.select({ id: event.id }).from(event).where(eq(event.workspaceId, ws.workspaceId));
      expect(rows).toHaveLength(33);
    });

    it("revoking a key on one instance refuses it on the other on the very next request", async () => {
      const owner = await app.signUp(`owner-${uid()}@example.com`);
      const ws = await app.seedWorkspace({ ownerUserId: owner.userId });
      const s = uid("s");
      for (const path of ["/a", "/b"]) expect((await other.app.mutation("guard.check", call(s, "read_file", { path }), { key: ws.key })).status).toBe(200);
      const [k] = await app.db.select().from(apiKey).where(eq(apiKey.workspaceId, ws.workspaceId));
      const revoked = await app.mutation("apiKeys.revoke", { workspaceSlug: ws.slug, keyId: k.id }, { cookie: owner.cookie });
      expect(revoked.status).toBe(200);
      expect((await other.app.mutation("guard.check", call(s, "read_file", { path: "/c" }), { key: ws.key })).status).toBe(401);
    });

    it("config.put on one instance changes the other's very next answer", async () => {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      await app.mutation("ingest.events", { events: [result(s, "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" })] }, { key: ws.key });
      expect((await app.mutation("config.put", { settings: { blocked_decision: "deny" } }, { key: ws.key })).status).toBe(200);
      const first = await other.app.mutation("guard.check", call(s, "bash", { command: "ls" }), { key: ws.key });
      expect(first.body.result!.data).toMatchObject({ decision: "deny", state: "blocked" });
      expect((await app.mutation("config.put", { settings: { blocked_decision: "ask" } }, { key: ws.key })).status).toBe(200);
      const second = await other.app.mutation("guard.check", call(s, "bash", { command: "ls" }), { key: ws.key });
      expect(second.body.result!.data).toMatchObject({ decision: "ask", state: "blocked" });
      // And back: every change is seen at once, not only the first.
      expect((await app.mutation("config.put", { settings: { blocked_decision: "deny" } }, { key: ws.key })).status).toBe(200);
      expect((await other.app.mutation("guard.check", call(s, "bash", { command: "ls" }), { key: ws.key })).body.result!.data.decision).toBe("deny");
    });

    it("ingest on one instance applies a rule changed by SQL behind its back at its very next batch", async () => {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      expect((await app.mutation("config.put", { tool_rules: { deploy: { consecutive_threshold: 5 } } }, { key: ws.key })).status).toBe(200);
      const timeout = () =>
        other.app.mutation("ingest.events", { events: [result(s, "deploy", { target: "prod" }, { success: false, error: "Request timed out after 30s" })] }, { key: ws.key });
      const states = async () =>
        (await app.db.select().from(keyState).where(eq(keyState.workspaceId, ws.workspaceId))).filter((k) => k.failureKey.startsWith("deploy")).map((k) => k.trust.state);
      // Two timeouts under a threshold of 5: the other instance now holds that configuration.
      for (let i = 0; i < 2; i++) expect((await timeout()).status).toBe(200);
      expect(await states()).toEqual(["trusted"]);
      await app.db.execute(sql`update workspace set config = jsonb_set(config, '{toolRules,deploy,consecutiveThreshold}', '3') where id = ${ws.workspaceId}`);
      // The third timeout meets the threshold in force now (3), not the one held (5).
      expect((await timeout()).status).toBe(200);
      expect(await states()).not.toContain("trusted");
    });

    it("a configuration changed by SQL behind every instance's back changes the very next answer, at either level", async () => {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      await app.mutation("ingest.events", { events: [result(s, "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" })] }, { key: ws.key });
      const decision = async () => (await other.app.mutation("guard.check", call(s, "bash", { command: "ls" }), { key: ws.key })).body.result!.data.decision;
      // The stored documents are camelCase (server/services/workspace-config.ts).
      const setBlockedDecision = (table: "organization" | "workspace", id: string, value: string) =>
        app.db.execute(sql`update ${sql.identifier(table)} set config = jsonb_set(config, '{settings}', coalesce(config->'settings', '{}') || jsonb_build_object('blockedDecision', ${value}::text)) where id = ${id}`);
      // "deny" is the answer the hot path gives from the configuration it holds; "ask" goes on to the
      // full path, which reads the documents itself. So each step below starts from a held "deny".
      await setBlockedDecision("organization", ws.organizationId, "deny");
      expect(await decision()).toBe("deny");
      await setBlockedDecision("organization", ws.organizationId, "ask");
      expect(await decision()).toBe("ask");
      await setBlockedDecision("organization", ws.organizationId, "deny");
      expect(await decision()).toBe("deny");
      await setBlockedDecision("workspace", ws.workspaceId, "ask");
      expect(await decision()).toBe("ask");
    });
  });
});

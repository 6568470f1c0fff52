/**
 * Group commit for ingest (issue 15, server/ingest/index.ts): concurrent `ingest.events` requests of
 * a workspace are applied as one batch in one transaction, and each is still answered alone — its
 * accepted events, its duplicates and the effects its own events produced.
 */
import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { at, call, result, uid } from "../support/agent";
import { event } from "@/db/schema";

describe.each(DATABASE_KINDS)("ingest groups on %s", (kind) => {
  const app = useTestApp(kind);

  const ingest = (key: string, events: unknown[]) => app.mutation("ingest.events", { events }, { key });

  it("concurrent requests share transactions; each answer counts its own events and carries its own effects", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    // The API key in the in-memory cache first, so that the requests below reach the group together.
    expect((await ingest(key, [result(uid("warm"), "Read", { file_path: "/warm" }, { success: true })])).status).toBe(200);
    const base = Date.now() - 60 * 60_000;
    const sessions = Array.from({ length: 6 }, () => uid("s"));
    const url = "https://api.example.com/v1/users";
    // Request 0: three server errors escalate the v1 key. Request 1 re-sends two of them (so
    // whichever of the two is applied first accepts them) and reads files in its own session.
    const failing = [1, 2, 3].map((m) => result(sessions[0], "http_request", { url }, { success: false, httpStatus: 503 }, { ts: at(base, m) }));
    const requests: unknown[][] = [
      [{ type: "session.start", id: uid(), sessionId: sessions[0], agent: "a0", ts: at(base, 0) }, ...failing],
      [failing[0], failing[1], ...[1, 2, 3].map((m) => result(sessions[1], "Read", { file_path: `/repo/${m}.ts` }, { success: true }, { ts: at(base, m) }))],
      // Requests 2–5: the same file read four times, each in its own session (a pattern there).
      ...sessions.slice(2).map((s) => [1, 2, 3, 4].map((m) => call(s, "Read", { file_path: "/srv/app/config.json" }, { ts: at(base, m) }))),
    ];
    const answers = (await Promise.all(requests.map((events) => ingest(key, events)))).map((r) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.result!.data as { accepted: number; duplicates: number; effects: { type: string; failureKey?: string; sessionId?: string }[] };
    });

    // Fewer transactions than requests: the group path ran (each transaction stamps its rows' xmin).
    const transactions = await app.db
      .select({ n: sql<number>`count(distinct ${event}.xmin::text)` })
      .from(event)
      .where(eq(event.workspaceId, workspaceId));
    expect(Number(transactions[0].n)).toBeLessThan(requests.length + 1);

    // Counts: every request's events are its accepted plus its duplicates; the two re-sent events
    // are accepted once, by whichever request came first.
    answers.forEach((a, i) => expect(a.accepted + a.duplicates, `request ${i}`).toBe(requests[i].length));
    expect(answers[0].duplicates + answers[1].duplicates).toBe(2);
    for (const a of answers.slice(2)) expect(a).toMatchObject({ accepted: 4, duplicates: 0 });
    const stored = await app.db.select({ n: sql<number>`count(*)` }).from(event).where(eq(event.workspaceId, workspaceId));
    expect(Number(stored[0].n)).toBe(1 + 4 + 3 + 4 * 4);

    // Effects: the escalation belongs to request 0 (the third failure is always its own), and a
    // session's effects go to the request that sent that session's events.
    const escalations = answers.map((a) => a.effects.filter((e) => e.type === "escalated").map((e) => e.failureKey));
    expect(escalations).toEqual([["http_request|domain=api.example.com|path_prefix=v1"], [], [], [], [], []]);
    answers.forEach((a, i) => {
      for (const e of a.effects) if (e.sessionId) expect(e.sessionId, `request ${i}: ${JSON.stringify(e)}`).toBe(i === 1 && e.sessionId === sessions[0] ? sessions[0] : sessions[i]);
    });
    const sessionEffects = answers.slice(2).map((a, i) => a.effects.filter((e) => e.sessionId === sessions[i + 2]).length);
    expect(sessionEffects.every((n) => n > 0), JSON.stringify(answers.slice(2).map((a) => a.effects))).toBe(true);

    // A group's request sent again alone: all of it is a duplicate now.
    expect((await ingest(key, requests[0])).body.result!.data).toMatchObject({ accepted: 0, duplicates: 4, effects: [] });
  });
});

/**
 * Failures stored before ingest computed fingerprints get them from the background backfill: in
 * chunks, resumable (a pass stopped part-way leaves exactly the rows it did not reach), safe with
 * two passes at once, and equal to the fingerprint ingest gives the same message — so old and new
 * failures land in one group. PGlite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import corpus from "../fixtures/error-corpus.json";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { failure } from "@/db/schema";
import { fingerprintError } from "@/server/engine/failure-fingerprint";
import { backfillFingerprints } from "@/server/services/fingerprint-backfill";
import { listFailureGroups } from "@/server/dashboard/failures";

describe.each(DATABASE_KINDS)("failure fingerprint backfill on %s", (kind) => {
  const app = useTestApp(kind);

  /** Failure rows as a release before fingerprints wrote them (no fingerprint). */
  const insertOld = async (workspaceId: string, messages: (string | null)[]) => {
    const now = Date.now();
    await app.db.insert(failure).values(
      messages.map((m, i) => ({
        workspaceId,
        eventId: uid("old"),
        failureKey: `old_tool|n=${i % 3}`,
        toolName: "old_tool",
        severity: "error",
        weight: 1,
        ts: new Date(now - (i + 1) * 60_000),
        sessionId: "old-session",
        agent: "legacy",
        errorMessage: m,
      })),
    );
  };
  const fingerprints = async (workspaceId: string) =>
    app.db.select({ id: failure.id, message: failure.errorMessage, fingerprint: failure.fingerprint }).from(failure).where(eq(failure.workspaceId, workspaceId));

  it("fills every missing fingerprint in chunks, resumes where it stopped, and matches ingest's", async () => {
    const a = await app.seedWorkspace();
    const b = await app.seedWorkspace();
    const enoent = (id: string) => `Error: ENOENT: no such file or directory, open '/srv/data/${id}.json'`;
    await ingestAccepted(app, a.key, [
      result(uid("s"), "read_file", { path: "/srv/data/new1.json" }, { success: false, error: enoent("new1") }),
      result(uid("s"), "read_file", { path: "/srv/data/new2.json" }, { success: false, error: enoent("new2") }),
    ]);
    const fromIngest = await fingerprints(a.workspaceId);
    expect(fromIngest.every((r) => r.fingerprint === fingerprintError(r.message).fingerprint)).toBe(true);

    const messages = corpus.messages.slice(0, 23).map((m) => m.message);
    await insertOld(a.workspaceId, [...messages, null, enoent("old1"), enoent("old2")]);
    await insertOld(b.workspaceId, corpus.messages.slice(100, 107).map((m) => m.message));
    const total = 2 + 26 + 7;
    const missing = async () => Number((await app.db.select({ n: sql<number>`count(*)::int` }).from(failure).where(sql`${failure.fingerprint} is null and ${failure.workspaceId} in (${a.workspaceId}, ${b.workspaceId})`))[0].n);
    expect(await missing()).toBe(total - 2);

    // Before the backfill the old failures are in no group.
    expect((await listFailureGroups(app.db, a.workspaceId)).map((g) => g.count)).toEqual([2]);

    // A pass stopped after one chunk of 4 wrote exactly 4 rows; the rest wait.
    expect(await backfillFingerprints(app.db, { batchSize: 4, maxChunks: 1, pauseMs: 0 })).toBe(4);
    expect(await missing()).toBe(total - 2 - 4);

    // Two passes at once (two instances) finish the rest between them, each row written once.
    const [x, y] = await Promise.all([backfillFingerprints(app.db, { batchSize: 4, pauseMs: 0 }), backfillFingerprints(app.db, { batchSize: 4, pauseMs: 0 })]);
    const rest = total - 2 - 4;
    // A pass that found its chunk taken leaves the workspace to the next pass; one more pass ends it.
    const last = await backfillFingerprints(app.db, { batchSize: 4, pauseMs: 0 });
    expect(x + y + last).toBe(rest);
    expect(await missing()).toBe(0);
    expect(await backfillFingerprints(app.db, { pauseMs: 0 })).toBe(0);

    for (const ws of [a.workspaceId, b.workspaceId]) {
      for (const r of await fingerprints(ws)) expect(r.fingerprint, String(r.message)).toBe(fingerprintError(r.message).fingerprint);
    }
    // The old ENOENT failures join the group of the new ones.
    const groups = await listFailureGroups(app.db, a.workspaceId);
    const files = groups.find((g) => g.sample === "Error: ENOENT: no such file or directory, open '<str>'");
    expect(files?.count).toBe(4);
    expect(files?.agents.sort()).toEqual(["default", "legacy"]);
    expect(groups.reduce((n, g) => n + g.count, 0)).toBe(28);
    expect(groups.some((g) => g.sample === "(no error message)")).toBe(true);
  });
});

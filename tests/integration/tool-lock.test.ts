/**
 * The tool lock (issue 15): batches on different keys of one tool run side by side, a batch with a
 * possibly-security result holds the whole tool. Two transactions are held open on purpose and a
 * `lock_timeout` tells whether the second one had to wait. Real PostgreSQL (and Citus when
 * selected): PGlite has one connection, so nothing there runs side by side.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import type { Tx } from "@/db/client";
import { keyState, toolLock } from "@/db/schema";
import { applyBatch, type BatchScope } from "@/server/ingest/apply";
import { normalizeEvents } from "@/server/ingest/schema";

const bashResult = (command: string, outcome: Record<string, unknown>) => ({
  type: "tool.result",
  id: uid(),
  sessionId: uid("s"),
  callId: uid("c"),
  toolName: "bash",
  args: { command },
  ...outcome,
});

for (const kind of DATABASE_KINDS.filter((k) => k !== "pglite")) {
  describe(`tool lock on ${kind}`, () => {
    const app = useTestApp(kind);

    /** Applies a batch in a transaction that stays open until `release()`. */
    function held(scope: BatchScope, events: Record<string, unknown>[], lockTimeoutMs?: number) {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let applied!: () => void;
      const appliedP = new Promise<void>((r) => (applied = r));
      const done = app.db.transaction(async (tx: Tx) => {
        if (lockTimeoutMs) await tx.execute(sql.raw(`set local lock_timeout = '${lockTimeoutMs}ms'`));
        await applyBatch(tx, scope, normalizeEvents(events as never, Date.now()));
        applied();
        await gate;
      });
      return { applied: appliedP, release, done };
    }

    /** Applies a batch and commits it: the tool's lock row then exists (the steady state). */
    async function committed(scope: BatchScope, events: Record<string, unknown>[]) {
      const batch = held(scope, events);
      await batch.applied;
      batch.release();
      await batch.done;
    }

    const lockTimeout = (err: unknown) => {
      const e = err as { code?: string; cause?: { code?: string } };
      return (e.code ?? e.cause?.code) === "55P03";
    };

    it("batches on different keys of one tool do not wait for each other", async () => {
      const ws = await app.seedWorkspace();
      // The tool's lock row exists from an earlier batch (the steady state).
      await committed(ws, [bashResult("ls -la", { success: true })]);

      // Same model, same day, same tool (model profiles, daily roll-ups): only the keys differ.
      const first = held(ws, [{ ...bashResult("make build", { success: true }), model: "m-1" }, { ...bashResult("make build", { success: false, error: "boom" }), model: "m-1" }]);
      await first.applied;
      const second = held(ws, [{ ...bashResult("npm test", { success: true }), model: "m-1" }], 2000);
      // A wait for `first` ends in a lock timeout: `done` rejects before `applied`.
      await Promise.race([second.applied, second.done]);
      second.release();
      await second.done;
      first.release();
      await first.done;
    });

    it("a security failure holds the whole tool: a batch on another key waits, then sees the block", async () => {
      const ws = await app.seedWorkspace();
      const warm = held(ws, [bashResult("ls -la", { success: true })]);
      await warm.applied;
      warm.release();
      await warm.done;

      const security = held(ws, [bashResult("sudo rm -rf /", { success: false, error: "denied" })]);
      await security.applied;
      const impatient = held(ws, [bashResult("git status", { success: true })], 500);
      await expect(impatient.done).rejects.toSatisfy(lockTimeout);

      const patient = held(ws, [bashResult("git status", { success: true })]);
      const order: string[] = [];
      void patient.applied.then(() => order.push("other key applied"));
      await new Promise((r) => setTimeout(r, 300));
      order.push("security committed");
      security.release();
      await security.done;
      await patient.applied;
      patient.release();
      await patient.done;
      expect(order).toEqual(["security committed", "other key applied"]);

      const rows = await app.db.select().from(keyState).where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.level, "key")));
      expect(rows.length).toBeGreaterThanOrEqual(3);
      expect(rows.filter((r) => r.effectiveState !== "blocked").map((r) => r.failureKey)).toEqual([]);
    });

    it("a security failure waits for batches of the tool already in flight", async () => {
      const ws = await app.seedWorkspace();
      const inFlight = held(ws, [bashResult("make build", { success: true })]);
      await inFlight.applied;
      const impatient = held(ws, [bashResult("sudo rm -rf /", { success: false, error: "denied" })], 500);
      await expect(impatient.done).rejects.toSatisfy(lockTimeout);
      inFlight.release();
      await inFlight.done;
    });

    it("a tool's lock row gone while the process believes it present (a recreated database) is created again and held", async () => {
      const ws = await app.seedWorkspace();
      await committed(ws, [bashResult("ls -la", { success: true })]);
      // The process has seen the row: its next batch sends the lock with the key locks behind it.
      await app.db.delete(toolLock).where(eq(toolLock.workspaceId, ws.workspaceId));

      const batch = held(ws, [bashResult("make build", { success: true })]);
      await batch.applied;
      // The batch created the row again (uncommitted): a security batch of the tool, which creates
      // the row it locks when it sees none, has to wait for it.
      const impatient = app.db.transaction(async (tx: Tx) => {
        await tx.execute(sql.raw(`set local lock_timeout = '300ms'`));
        await tx.insert(toolLock).values({ workspaceId: ws.workspaceId, toolName: "bash" }).onConflictDoNothing();
      });
      await expect(impatient).rejects.toSatisfy(lockTimeout);
      batch.release();
      await batch.done;
      expect(await app.db.select().from(toolLock).where(eq(toolLock.workspaceId, ws.workspaceId))).toHaveLength(1);
    });
  });
}

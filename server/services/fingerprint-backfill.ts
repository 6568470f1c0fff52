/**
 * Fingerprints for failures stored before ingest computed them (migration 0022 added the column
 * empty). A background pass, per workspace, in chunks: read up to `batchSize` rows with
 * `fingerprint IS NULL` (the workspace's fingerprint index finds them), fingerprint their messages
 * here (the normalizer is TypeScript, not SQL) and write them back in one statement, adding them to
 * the failure-group roll-ups in the same transaction. Each chunk is its own short transaction, so
 * ingest never waits behind the pass; the rows still empty are the pass's only state, so a
 * restarted process (or a second instance) simply carries on.
 */
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { fingerprintError } from "@/server/engine/failure-fingerprint";
import { failureGroupRollupWrites } from "./failure-group-rollup";

const FINGERPRINT_BACKFILL_BATCH = 500;
/** The pause between chunks: the pass leaves the database to requests between them. */
const PAUSE_MS = 20;
/** Delay after start-up before the first pass. */
const START_DELAY_MS = 5_000;

export interface BackfillOptions {
  batchSize?: number;
  /** Stop after this many chunks (the rest are left for the next pass). */
  maxChunks?: number;
  pauseMs?: number;
}

/** One chunk of one workspace: the number of rows given a fingerprint. */
async function backfillChunk(db: Db, workspaceId: string, batchSize: number): Promise<{ read: number; written: number }> {
  const rows = rowsOf<{ id: string | number; error_message: string | null }>(
    await db.execute(sql`select id, error_message from failure where workspace_id = ${workspaceId} and fingerprint is null limit ${batchSize}`),
  );
  if (rows.length === 0) return { read: 0, written: 0 };
  const values = JSON.stringify(rows.map((r) => ({ id: String(r.id), fp: fingerprintError(r.error_message).fingerprint })));
  // The rows this statement fingerprinted (another instance's are skipped by `fingerprint is null`)
  // join the failure-group roll-ups in the same transaction: each failure is added exactly once.
  const written = await db.transaction(async (tx) => {
    const updated = rowsOf<{ ts: string | Date; fingerprint: string; error_message: string | null; failure_key: string; tool_name: string; agent: string; session_id: string }>(
      await tx.execute(sql`update failure f set fingerprint = v.fp
        from json_to_recordset(${values}::json) as v(id bigint, fp text)
        where f.workspace_id = ${workspaceId} and f.id = v.id and f.fingerprint is null
        returning f.ts, f.fingerprint, f.error_message, f.failure_key, f.tool_name, f.agent, f.session_id`),
    );
    const grouped = updated.map((r) => ({
      ts: new Date(r.ts), fingerprint: r.fingerprint, errorMessage: r.error_message, failureKey: r.failure_key, toolName: r.tool_name, agent: r.agent, sessionId: r.session_id,
    }));
    for (const statement of failureGroupRollupWrites(workspaceId, grouped)) await tx.execute(statement);
    return updated.length;
  });
  return { read: rows.length, written };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fills missing fingerprints, workspace by workspace; returns the rows written. */
export async function backfillFingerprints(db: Db, opts: BackfillOptions = {}): Promise<number> {
  const batchSize = Math.max(1, opts.batchSize ?? FINGERPRINT_BACKFILL_BATCH);
  const pauseMs = opts.pauseMs ?? PAUSE_MS;
  let chunks = 0;
  let written = 0;
  const workspaces = rowsOf<{ id: string }>(await db.execute(sql`select id from workspace order by id`));
  for (const { id } of workspaces) {
    for (;;) {
      if (opts.maxChunks !== undefined && chunks >= opts.maxChunks) return written;
      const chunk = await backfillChunk(db, id, batchSize);
      if (chunk.read === 0) break;
      chunks++;
      written += chunk.written;
      // Nothing written (another instance took these rows): leave the workspace to the next pass rather than spin.
      if (chunk.read < batchSize || chunk.written === 0) break;
      if (pauseMs > 0) await sleep(pauseMs);
    }
  }
  return written;
}

/** Runs the backfill once, shortly after start-up (failures ingested since carry their fingerprint). */
export function startFingerprintBackfill(db: Db, delayMs = START_DELAY_MS): void {
  const timer = setTimeout(() => {
    backfillFingerprints(db)
      .then((n) => n && console.log(`[vigil] failure fingerprints: filled ${n} older failures`))
      .catch((err) => console.error("[vigil] failure fingerprint backfill failed (retried at the next start):", err));
  }, delayMs);
  timer.unref();
}

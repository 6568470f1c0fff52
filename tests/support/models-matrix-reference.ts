/**
 * The Models matrix as the raw tool.result events define it, and as the page reads it, in one
 * comparable shape: the reference the roll-up tests hold `modelMatrix` to.
 */
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { modelMatrix } from "@/server/dashboard/patterns-data";

export type Window = { from?: Date; to?: Date };
type Cell = { k: string; m: string; a: number; f: number; last: string | Date | null };

/** `and ts >= … and ts < …` for a window's set ends. */
export const windowTimeSql = (w: Window) =>
  sql.raw(`${w.from ? `and ts >= '${w.from.toISOString()}'::timestamptz` : ""} ${w.to ? `and ts < '${w.to.toISOString()}'::timestamptz` : ""}`);

const normCells = (rows: Cell[]) => rows.map((r) => `${r.k}|${r.m}|${Number(r.a)}|${Number(r.f)}|${r.last ? new Date(r.last).toISOString() : null}`).sort();

/** Keys by failures, attempts, name; the top keys' cells; models by their shown attempts. */
export async function rawModelMatrix(db: Db, workspaceId: string, w: Window, topKeys: number) {
  const rows = rowsOf<Cell>(
    await db.execute(sql`
      select failure_key as k, coalesce(model, 'unknown') as m, count(*)::int as a, (count(*) filter (where failed))::int as f, max(ts) filter (where failed) as last
      from event where workspace_id = ${workspaceId} and type = 'tool.result' and failure_key is not null ${windowTimeSql(w)}
      group by 1, 2`),
  );
  const perKey = new Map<string, { failureKey: string; attempts: number; failures: number }>();
  for (const r of rows) {
    const k = perKey.get(r.k) ?? { failureKey: r.k, attempts: 0, failures: 0 };
    k.attempts += Number(r.a);
    k.failures += Number(r.f);
    perKey.set(r.k, k);
  }
  const keys = [...perKey.values()].sort((a, b) => b.failures - a.failures || b.attempts - a.attempts || a.failureKey.localeCompare(b.failureKey)).slice(0, topKeys);
  const shownKeys = new Set(keys.map((k) => k.failureKey));
  const shown = rows.filter((r) => shownKeys.has(r.k));
  const modelAttempts = new Map<string, number>();
  for (const r of shown) modelAttempts.set(r.m, (modelAttempts.get(r.m) ?? 0) + Number(r.a));
  const models = [...modelAttempts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m);
  return { models, keys, cells: normCells(shown) };
}

/** `modelMatrix`'s answer in rawModelMatrix's shape. */
export async function pageModelMatrix(db: Db, workspaceId: string, w: Window, topKeys: number) {
  const m = await modelMatrix(db, workspaceId, topKeys, w);
  const cells = Object.entries(m.cells).flatMap(([model, byKey]) => Object.entries(byKey).map(([k, c]) => ({ k, m: model, a: c.attempts, f: c.failures, last: c.lastFailureAt })));
  return { models: m.models, keys: m.keys, cells: normCells(cells) };
}

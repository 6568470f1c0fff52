/**
 * Vigil on Citus (SPEC 9). When the database has the `citus` extension (or preloads it), the
 * tables the migrations created are distributed right after them, idempotently:
 *  - workspace data (every table with a `workspace_id` column) is distributed by `workspace_id`,
 *    all colocated, so one workspace's rows live on one worker and its queries route there;
 *  - `audit_log` is distributed by `organization_id` (its primary key has no workspace);
 *  - everything else (users, auth, organizations, members, workspaces, installation values, global
 *    tool patterns) becomes a reference table, copied to every node so workspace queries join it
 *    locally; so does `api_key`: every request looks its key up by hash alone (the bearer value
 *    names no workspace), which on a distributed table would ask every shard.
 * Partitions of the event log created later are distributed by Citus itself (they inherit the
 * parent's distribution). Plain PostgreSQL and PGlite never reach this module's DDL.
 */
import type { Sql } from "postgres";

/** Tables distributed by another column than `workspace_id`. */
const DISTRIBUTED_BY: Record<string, string> = { audit_log: "organization_id" };
/** Workspace tables read by something else than the workspace (small, rarely written). */
const REFERENCE = new Set(["api_key"]);
/** The colocation group of workspace data is anchored at this table when present. */
const WORKSPACE_ANCHOR = "agent_session";

export type CitusPlacement = { kind: "reference" } | { kind: "distributed"; column: string };

/** Where a table goes on Citus, from its name and columns. */
function citusPlacement(table: string, columns: string[]): CitusPlacement {
  if (DISTRIBUTED_BY[table]) return { kind: "distributed", column: DISTRIBUTED_BY[table] };
  if (REFERENCE.has(table)) return { kind: "reference" };
  if (columns.includes("workspace_id")) return { kind: "distributed", column: "workspace_id" };
  return { kind: "reference" };
}

/**
 * True when the database runs Citus: the extension is installed, or the server preloads it and
 * it is created here (a fresh database on a Citus coordinator).
 */
export async function enableCitusIfPresent(sql: Sql): Promise<boolean> {
  const [{ installed, preloaded, available }] = await sql<{ installed: boolean; preloaded: boolean; available: boolean }[]>`
    select exists (select 1 from pg_extension where extname = 'citus') as installed,
           'citus' = any(string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ',')) as preloaded,
           exists (select 1 from pg_available_extensions where name = 'citus') as available`;
  if (installed) return true;
  if (!preloaded || !available) return false;
  await sql`create extension if not exists citus`;
  return true;
}

interface TableInfo {
  name: string;
  columns: string[];
  /** Public tables this one references by foreign key. */
  references: string[];
}

/**
 * Distributes the tables that are not Citus tables yet; returns what it did ("reference x",
 * "distributed y by c"). Runs on the coordinator after every migration run (under the migration
 * lock), so a table a later migration adds is placed on the next start.
 */
export async function distributeTables(sql: Sql): Promise<string[]> {
  // A fresh Citus database has no nodes yet: it is the coordinator of a single-node cluster.
  const [{ coordinator }] = await sql<{ coordinator: boolean }[]>`
    select citus_is_coordinator() or not exists (select 1 from pg_dist_node) as coordinator`;
  if (!coordinator) throw new Error("Citus: DATABASE_URL must point at the coordinator (migrations and distribution run there)");
  const tables = await sql<TableInfo[]>`
    select c.relname as name,
      array(select a.attname::text from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns,
      array(select distinct f.confrelid::regclass::text from pg_constraint f where f.conrelid = c.oid and f.contype = 'f' and f.confrelid <> c.oid) as references
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
      -- Distributed ('h') and reference ('t') tables are placed; a Citus-local table (a new table
      -- Citus converted for its foreign key to a reference table) still is not.
      and not exists (select 1 from pg_dist_partition d where d.logicalrelid = c.oid and (d.partmethod = 'h' or d.repmodel = 't'))
    order by c.relname`;
  const done: string[] = [];
  const unquote = (n: string) => n.replace(/^"(.*)"$/, "$1");

  // Reference tables first, referenced before referencing (a reference table's foreign keys must
  // point at reference tables).
  const pending = new Map(tables.filter((t) => citusPlacement(t.name, t.columns).kind === "reference").map((t) => [t.name, t]));
  while (pending.size) {
    const ready = [...pending.values()].filter((t) => t.references.every((r) => !pending.has(unquote(r)) || unquote(r) === t.name));
    if (!ready.length) throw new Error(`Citus: foreign-key cycle among ${[...pending.keys()].join(", ")}`);
    for (const t of ready) {
      await sql`select create_reference_table(${quoteIdent(t.name)})`;
      pending.delete(t.name);
      done.push(`reference ${t.name}`);
    }
  }

  // Workspace data: one colocation group (anchored so later tables join the existing group).
  const [existing] = await sql<{ name: string }[]>`
    select logicalrelid::regclass::text as name from pg_dist_partition p
    join pg_attribute a on a.attrelid = p.logicalrelid and a.attname = 'workspace_id'
    where p.partmethod = 'h' and p.partkey is not null
      and column_to_column_name(p.logicalrelid, p.partkey) = 'workspace_id'
    order by (p.logicalrelid::regclass::text = ${WORKSPACE_ANCHOR}) desc
    limit 1`;
  let anchor = existing?.name ?? null;
  const distributed = tables
    .map((t) => ({ t, p: citusPlacement(t.name, t.columns) }))
    .filter((x): x is { t: TableInfo; p: { kind: "distributed"; column: string } } => x.p.kind === "distributed")
    .sort((a, b) => Number(b.t.name === WORKSPACE_ANCHOR) - Number(a.t.name === WORKSPACE_ANCHOR));
  for (const { t, p } of distributed) {
    if (p.column === "workspace_id") {
      await sql`select create_distributed_table(${quoteIdent(t.name)}, 'workspace_id', colocate_with => ${anchor ?? "none"})`;
      anchor ??= quoteIdent(t.name);
    } else {
      await sql`select create_distributed_table(${quoteIdent(t.name)}, ${p.column}, colocate_with => 'none')`;
    }
    done.push(`distributed ${t.name} by ${p.column}`);
  }
  return done;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Exports of the Failures, Sessions and Audit pages (CSV or JSON) for the filters on screen.
 * Streamed: rows are read in keyset chunks and each chunk is written only when the client has
 * taken the one before (a pull stream), so a million-row export holds one chunk in memory.
 * The conditions are the pages' own (failureFilters, sessionListWhere, workspaceAuditWhere).
 */
import { and, asc, desc, gt, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, auditLog, failure } from "@/db/schema";
import type { Runtime } from "@/server/runtime";
import { isDatabaseUnavailable } from "@/server/http/database-unavailable";
import { getWorkspaceAccess } from "@/server/services/tenancy";
import { workspaceAuditWhere, type AuditFilters } from "./audit";
import { failureFilters, SEVERITIES, type FailureQuery } from "./failures";
import { loadSessionControl, ROW_COLUMNS, SESSION_STATUSES, sessionListWhere, toRow, type SessionControlContext, type SessionStatus } from "./sessions-data";
import { readTimeWindow } from "./time-range";
import { stringParam, type SearchParams } from "./util";
import { PATTERN_TYPES } from "@/server/engine/types";

const EXPORT_RESOURCES = ["failures", "sessions", "audit"] as const;
export type ExportResource = (typeof EXPORT_RESOURCES)[number];
const EXPORT_FORMATS = ["csv", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Rows read per round trip. */
const EXPORT_CHUNK_ROWS = 1000;

// ── CSV (RFC 4180) ────────────────────────────────────────────────────────────────────────────

/** A leading character a spreadsheet reads as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field: null and undefined empty, objects as JSON; a text starting like a formula gets a
 * leading `'` so a spreadsheet shows it instead of evaluating it; quoted when it holds a comma, a
 * quote or a line break, quotes doubled.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  let s: string;
  if (typeof value === "string") s = FORMULA_START.test(value) ? `'${value}` : value;
  else if (typeof value === "object") s = JSON.stringify(value);
  else s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV record with its CRLF. */
function csvRecord(values: readonly unknown[]): string {
  return values.map(csvField).join(",") + "\r\n";
}

// ── the pages' filters, read from the same search params ─────────────────────────────────────

/** The Failures page's filters (`tool`, `severity`, `model`, `q`, `fp` and the time window). */
export function failureQueryFromParams(sp: SearchParams, now = new Date()): FailureQuery {
  const severity = stringParam(sp.severity);
  const time = readTimeWindow(sp, "all", now);
  return {
    tool: stringParam(sp.tool),
    severity: severity && (SEVERITIES as readonly string[]).includes(severity) ? severity : undefined,
    model: stringParam(sp.model),
    text: stringParam(sp.q),
    fingerprint: stringParam(sp.fp),
    from: time.from,
    to: time.to,
  };
}

export interface SessionFilters {
  status: SessionStatus | null;
  agent: string | null;
  q: string | null;
  pattern: string | null;
  from?: Date;
  to?: Date;
}

/** The Sessions page's filters (`status`, `agent`, `q`, `pattern` and the time window). */
export function sessionFiltersFromParams(sp: SearchParams, now = new Date()): SessionFilters {
  const status = stringParam(sp.status);
  const pattern = stringParam(sp.pattern);
  const window = readTimeWindow(sp, "all", now);
  return {
    status: (SESSION_STATUSES as readonly string[]).includes(status ?? "") ? (status as SessionStatus) : null,
    agent: stringParam(sp.agent) ?? null,
    q: stringParam(sp.q) ?? null,
    pattern: pattern === "any" || (PATTERN_TYPES as readonly string[]).includes(pattern ?? "") ? pattern! : null,
    from: window.from,
    to: window.to,
  };
}

/** The Audit page's filters (`action`, `actor` and the time window). */
export function auditFiltersFromParams(sp: SearchParams, organizationId: string, now = new Date()): AuditFilters {
  const window = readTimeWindow(sp, "all", now);
  return { action: stringParam(sp.action), actorType: stringParam(sp.actor), organizationId, from: window.from, to: window.to };
}

// ── sources: keyset chunks in a stable order ──────────────────────────────────────────────────

export interface ExportSource {
  columns: readonly string[];
  /** The next chunk after `cursor` (null: the first); `cursor` of the last row. */
  chunk(cursor: unknown, limit: number): Promise<{ records: Record<string, unknown>[]; cursor: unknown }>;
}

const FAILURE_COLUMNS = ["id", "ts", "failureKey", "toolName", "domain", "severity", "weight", "sessionId", "agent", "model", "httpStatus", "errorMessage", "fingerprint", "eventId"] as const;

/** Failures newest first, as the page lists them; the cursor is (ts as text, id) so no microsecond is lost. */
export function failureSource(db: Db, workspaceId: string, q: FailureQuery): ExportSource {
  const where = failureFilters(workspaceId, q);
  return {
    columns: FAILURE_COLUMNS,
    async chunk(cursor, limit) {
      const after = cursor as { ts: string; id: number } | null;
      const rows = await db
        .select({
          id: failure.id,
          ts: failure.ts,
          tsText: sql<string>`${failure.ts}::text`,
          failureKey: failure.failureKey,
          toolName: failure.toolName,
          domain: failure.domain,
          severity: failure.severity,
          weight: failure.weight,
          sessionId: failure.sessionId,
          agent: failure.agent,
          model: failure.model,
          httpStatus: failure.httpStatus,
          errorMessage: failure.errorMessage,
          fingerprint: failure.fingerprint,
          eventId: failure.eventId,
        })
        .from(failure)
        .where(after ? and(where, sql`(${failure.ts}, ${failure.id}) < (${after.ts}::timestamptz, ${after.id})`) : where)
        .orderBy(desc(failure.ts), desc(failure.id))
        .limit(limit);
      const last = rows.at(-1);
      return {
        records: rows.map(({ tsText: _, ...r }) => ({ ...r, id: Number(r.id), ts: r.ts.toISOString() })),
        cursor: last ? { ts: last.tsText, id: Number(last.id) } : after,
      };
    },
  };
}

const SESSION_COLUMNS = ["sessionId", "agent", "model", "status", "startedAt", "lastEventAt", "endedAt", "paused", "pauseReason", "held", "eventCount", "callCount", "failureCount", "patternCount"] as const;

/** Sessions by id (the primary key's order: each chunk one index range). */
function sessionSource(db: Db, workspaceId: string, f: SessionFilters, control: SessionControlContext): ExportSource {
  const where = sessionListWhere({ workspaceId, ...f }, control);
  return {
    columns: SESSION_COLUMNS,
    async chunk(cursor, limit) {
      const after = cursor as string | null;
      const rows = await db
        .select(ROW_COLUMNS)
        .from(agentSession)
        .where(after !== null ? and(where, gt(agentSession.sessionId, after)) : where)
        .orderBy(asc(agentSession.sessionId))
        .limit(limit);
      const records = rows.map((r) => {
        const row = toRow(r, control);
        return Object.fromEntries(SESSION_COLUMNS.map((c) => [c, row[c]]));
      });
      return { records, cursor: rows.at(-1)?.sessionId ?? after };
    },
  };
}

const AUDIT_COLUMNS = ["id", "createdAt", "actorType", "actorLabel", "action", "target", "before", "after"] as const;

/** Audit entries newest first, as the page lists them. */
function auditSource(db: Db, workspaceId: string, f: AuditFilters): ExportSource {
  const where = workspaceAuditWhere(workspaceId, f);
  return {
    columns: AUDIT_COLUMNS,
    async chunk(cursor, limit) {
      const after = cursor as { at: string; id: number } | null;
      const rows = await db
        .select({
          id: auditLog.id,
          createdAt: auditLog.createdAt,
          atText: sql<string>`${auditLog.createdAt}::text`,
          actorType: auditLog.actorType,
          actorLabel: auditLog.actorLabel,
          action: auditLog.action,
          target: auditLog.target,
          before: auditLog.before,
          after: auditLog.after,
        })
        .from(auditLog)
        .where(after ? and(where, sql`(${auditLog.createdAt}, ${auditLog.id}) < (${after.at}::timestamptz, ${after.id})`) : where)
        .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
        .limit(limit);
      const last = rows.at(-1);
      return {
        records: rows.map(({ atText: _, ...r }) => ({ ...r, id: Number(r.id), createdAt: r.createdAt.toISOString() })),
        cursor: last ? { at: last.atText, id: Number(last.id) } : after,
      };
    },
  };
}

// ── the stream ─────────────────────────────────────────────────────────────────────────────────

/**
 * The export as bytes. `pull` runs only when the reader wants more (highWaterMark one chunk): a
 * slow client slows the reads instead of filling memory. JSON is one array, a record per line.
 */
export function exportStream(source: ExportSource, format: ExportFormat, chunkRows = EXPORT_CHUNK_ROWS): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cursor: unknown = null;
  let first = true;
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = "";
        if (!started) {
          started = true;
          text += format === "csv" ? csvRecord(source.columns) : "[";
        }
        const { records, cursor: next } = await source.chunk(cursor, chunkRows);
        cursor = next;
        for (const r of records) {
          if (format === "csv") text += csvRecord(source.columns.map((c) => r[c]));
          else {
            text += (first ? "\n" : ",\n") + JSON.stringify(r);
            first = false;
          }
        }
        if (records.length < chunkRows) {
          if (format === "json") text += first ? "]\n" : "\n]\n";
          if (text) controller.enqueue(encoder.encode(text));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(text));
      },
    },
    { highWaterMark: 1 },
  );
}

// ── the route ──────────────────────────────────────────────────────────────────────────────────

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
const badRequest = (field: string, message: string) => json(400, { error: { message, field } });

/** The URL of an export of `resource` for the page's current search params. */
export function exportHref(resource: ExportResource, slug: string, format: ExportFormat, sp: SearchParams): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(sp)) {
    if (k === "page" || k === "sort" || k === "dir" || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  }
  params.set("workspace", slug);
  params.set("format", format);
  return `/api/export/${resource}?${params.toString()}`;
}

/**
 * GET /api/export/<resource>?workspace=<slug>&format=csv|json&<the page's filters>: a signed-in
 * member of the workspace's organization, any role (what the page shows, the export holds).
 */
export async function handleExport(req: Request, runtime: Runtime, resource: string): Promise<Response> {
  if (!(EXPORT_RESOURCES as readonly string[]).includes(resource)) return json(404, { error: { message: `No export of '${resource.slice(0, 40)}': ${EXPORT_RESOURCES.join(", ")}` } });
  const url = new URL(req.url);
  const slug = url.searchParams.get("workspace")?.trim() ?? "";
  if (!slug || slug.length > 63) return badRequest("workspace", "workspace: the workspace's slug is required");
  const format = url.searchParams.get("format") ?? "csv";
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) return badRequest("format", "format: csv or json");
  try {
    const session = await runtime.auth.api.getSession({ headers: req.headers });
    if (!session) return json(401, { error: { message: "Sign in first" } });
    const db = runtime.database.db;
    const access = await getWorkspaceAccess(db, session.user.id, slug);
    if (!access) return json(404, { error: { message: "Workspace not found" } });
    const sp: SearchParams = {};
    for (const k of new Set(url.searchParams.keys())) sp[k] = url.searchParams.get(k) ?? undefined;
    const now = new Date();
    const ws = access.workspace;
    const source =
      resource === "failures"
        ? failureSource(db, ws.id, failureQueryFromParams(sp, now))
        : resource === "sessions"
          ? sessionSource(db, ws.id, sessionFiltersFromParams(sp, now), await loadSessionControl(db, ws.id, now.getTime()))
          : auditSource(db, ws.id, auditFiltersFromParams(sp, ws.organizationId, now));
    const stamp = now.toISOString().slice(0, 19).replace(/[:T]/g, (c) => (c === "T" ? "-" : ""));
    const filename = `vigil-${ws.slug}-${resource}-${stamp}.${format}`.replace(/[^A-Za-z0-9._-]/g, "_");
    return new Response(exportStream(source, format as ExportFormat), {
      status: 200,
      headers: {
        "content-type": format === "csv" ? "text/csv; charset=utf-8; header=present" : "application/json; charset=utf-8",
        "content-disposition": `attachment; filename="${filename}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  } catch (err) {
    if (isDatabaseUnavailable(err)) return json(503, { error: { message: "The database is unavailable; try again shortly" } });
    throw err;
  }
}


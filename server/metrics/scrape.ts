/**
 * One scrape of `GET /api/metrics` (SPEC 7.8): this process's counters and the gauges read from the
 * database now, in one statement, for one workspace (an admin key) or all of them (the metrics token).
 *
 * A scrape renders through a Registry of its own holding views: each view hands prom-client the
 * counted values of one series, kept to the scrape's workspaces and with the workspace's slug as
 * its `workspace` label, so the format (Prometheus text or OpenMetrics) stays prom-client's.
 */
import { SESSION_STATUSES } from "@/server/engine/session-status";
import { sql } from "drizzle-orm";
import { Registry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import { jsonValue, rowsOf, type Db } from "@/db/client";
import { processRegistry } from "./index";

const FAILURE_KEY_STATES = ["trusted", "escalated", "recovering", "blocked"] as const;
const APPROVAL_KINDS = ["recovery", "tool_call", "reset"] as const;
/** A session without events for this long is idle (the `session_idle_minutes` default, services/sessions.ts). */
const IDLE_MINUTES = 30;

interface GaugeRow {
  workspaces: unknown;
  keys: unknown;
  approvals: unknown;
  sessions: unknown;
}
type Count = [workspaceId: string, label: string, count: number];

/**
 * The gauges' counts, one round trip: each aggregate as a JSON array of [workspace, label, count].
 * `workspaceId` null: every workspace.
 */
async function readGauges(db: Db, workspaceId: string | null, now: Date) {
  const ws = (column: string) => (workspaceId === null ? sql`true` : sql`${sql.raw(column)} = ${workspaceId}`);
  const idleBefore = new Date(now.getTime() - IDLE_MINUTES * 60_000).toISOString();
  const result = await db.execute(sql`select
    (select coalesce(json_agg(json_build_array(w.id, w.slug)), '[]') from workspace w where ${ws("w.id")}) as workspaces,
    (select coalesce(json_agg(json_build_array(k.workspace_id, k.state, k.n)), '[]')
       from (select workspace_id, state, count(*)::int as n from key_state where ${ws("workspace_id")} group by 1, 2) k) as keys,
    (select coalesce(json_agg(json_build_array(a.workspace_id, a.kind, a.n)), '[]')
       from (select workspace_id, kind, count(*)::int as n from approval where status = 'pending' and ${ws("workspace_id")} group by 1, 2) a) as approvals,
    (select coalesce(json_agg(json_build_array(s.workspace_id, s.status, s.n)), '[]')
       from (select s.workspace_id,
               case when s.ended_at is not null then 'ended'
                    when s.paused or exists (select 1 from operator_hold h where h.workspace_id = s.workspace_id
                      and (h.scope = 'workspace' or (h.scope = 'agent' and h.target = s.agent))) then 'paused'
                    when s.last_event_at < ${idleBefore}::timestamptz then 'idle' else 'active' end as status,
               count(*)::int as n
             from agent_session s where ${ws("s.workspace_id")} group by 1, 2) s) as sessions`);
  const [row] = rowsOf<GaugeRow>(result);
  return {
    workspaces: jsonValue<[string, string][]>(row.workspaces),
    keys: jsonValue<Count[]>(row.keys),
    approvals: jsonValue<Count[]>(row.approvals),
    sessions: jsonValue<Count[]>(row.sessions),
  };
}

/** Every label value of a gauge for every workspace (0 when none), so alerts see a series before its first count. */
function gaugeValues(slugs: Map<string, string>, label: string, labelValues: readonly string[], counts: Count[]): MetricValue<string>[] {
  const byKey = new Map(counts.map(([w, l, n]) => [`${w}\u0001${l}`, n]));
  const out: MetricValue<string>[] = [];
  for (const [id, slug] of slugs) {
    const seen = new Set<string>();
    for (const value of [...labelValues, ...counts.filter((c) => c[0] === id).map((c) => c[1])]) {
      if (seen.has(value)) continue;
      seen.add(value);
      out.push({ labels: { workspace: slug, [label]: value }, value: byKey.get(`${id}\u0001${value}`) ?? 0 });
    }
  }
  return out;
}

type View = { name: string; help: string; type: string; aggregator: string; get: () => Promise<MetricObjectWithValues<MetricValue<string>>> };

const GAUGE_HELP = {
  vigil_failure_keys: "Failure keys (and domain- and tool-level states) per trust state, read from the database at scrape time.",
  vigil_approvals_pending: "Approvals waiting for a person, per kind, read from the database at scrape time.",
  vigil_sessions: "Sessions per status (active, idle, paused, ended), read from the database at scrape time.",
} as const;

const OPENMETRICS = Registry.OPENMETRICS_CONTENT_TYPE;
const PROMETHEUS_TEXT = Registry.PROMETHEUS_CONTENT_TYPE;

/** The exposition format a scraper's `Accept` asks for: OpenMetrics when it names it, else Prometheus text. */
export function contentTypeFor(accept: string | null): typeof OPENMETRICS | typeof PROMETHEUS_TEXT {
  return accept && /application\/openmetrics-text/i.test(accept) ? OPENMETRICS : PROMETHEUS_TEXT;
}

/**
 * The scrape's text: `workspaceId` null for every workspace. Series without a workspace (refusals
 * before a key was read) only in a scrape of every workspace.
 */
export async function renderMetrics(db: Db, workspaceId: string | null, contentType: typeof OPENMETRICS | typeof PROMETHEUS_TEXT, now = new Date()): Promise<string> {
  const [gauges, counted] = await Promise.all([readGauges(db, workspaceId, now), processRegistry.getMetricsAsJSON()]);
  const slugs = new Map(gauges.workspaces);
  const registry = new Registry<typeof OPENMETRICS | typeof PROMETHEUS_TEXT>();
  registry.setContentType(contentType);
  for (const metric of counted) {
    const values: MetricValue<string>[] = [];
    for (const v of (metric as MetricObjectWithValues<MetricValue<string>>).values) {
      const id = v.labels.workspace as string | undefined;
      if (!id) {
        if (workspaceId === null) values.push(withoutEmptyWorkspace(v));
        continue;
      }
      const slug = slugs.get(id);
      if (slug === undefined) continue; // another workspace's series (or one deleted since)
      values.push({ ...v, labels: { ...v.labels, workspace: slug } });
    }
    registry.registerMetric(view(metric.name, metric.help, String(metric.type), values) as never);
  }
  registry.registerMetric(view("vigil_failure_keys", GAUGE_HELP.vigil_failure_keys, "gauge", gaugeValues(slugs, "state", FAILURE_KEY_STATES, gauges.keys)) as never);
  registry.registerMetric(view("vigil_approvals_pending", GAUGE_HELP.vigil_approvals_pending, "gauge", gaugeValues(slugs, "kind", APPROVAL_KINDS, gauges.approvals)) as never);
  registry.registerMetric(view("vigil_sessions", GAUGE_HELP.vigil_sessions, "gauge", gaugeValues(slugs, "status", SESSION_STATUSES, gauges.sessions)) as never);
  return registry.metrics();
}

/** A refusal counted before any key was read has an empty workspace: shown without the label. */
function withoutEmptyWorkspace(v: MetricValue<string>): MetricValue<string> {
  const { workspace: _none, ...labels } = v.labels;
  return { ...v, labels };
}

function view(name: string, help: string, type: string, values: MetricValue<string>[]): View {
  const metric = { name, help, type, aggregator: "sum", values };
  const v: View = { name, help, type, aggregator: "sum", get: async () => ({ ...metric, name: v.name }) as never };
  return v;
}

import { DataTable, withSearchParams, type Column, type SearchParamsRecord } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { NameList } from "@/components/middle-truncate";
import { RelativeTime } from "@/components/relative-time";
import { Sparkline } from "@/components/sparkline";
import type { FailureGroup } from "@/server/dashboard/failures";

/** "day", "3 days", "hour", "15 minutes": one sparkline bar. */
function bucketName(ms = 86_400_000): string {
  const unit = ms % 86_400_000 === 0 ? ["day", 86_400_000] : ms % 3_600_000 === 0 ? ["hour", 3_600_000] : ["minute", 60_000];
  const n = ms / (unit[1] as number);
  return n === 1 ? (unit[0] as string) : `${n} ${unit[0]}s`;
}

/** The Failures page's groups: one row per normalized message; a row opens its failures. */
export function FailureGroupsTable({ groups, path, sp, now }: { groups: FailureGroup[]; path: string; sp: SearchParamsRecord; now: Date }) {
  const href = (g: FailureGroup) => withSearchParams(path, sp, { view: "list", fp: g.fingerprint, page: null });
  const columns: Column<FailureGroup>[] = [
    { id: "sample", header: "Failure", cell: (g) => <code className="failure-group-sample" style={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }}>{g.sample}</code>, minWidth: 260, nowrap: false },
    { id: "count", header: "Count", align: "right", cell: (g) => g.count.toLocaleString("en-US") },
    { id: "trend", header: "Trend", cell: (g) => (g.daily ? <Sparkline values={g.daily} label={`Failures per ${bucketName(g.trendBucketMs)}`} /> : null), headerTitle: "Failures over the range: per day, or per hour or minutes for a range under a week" },
    { id: "tools", header: "Tools", cell: (g) => <NameList names={g.toolNames} mono /> },
    { id: "keys", header: "Keys", align: "right", cell: (g) => <span title={g.failureKeys.join("\n")}>{g.keyCount.toLocaleString("en-US")}</span>, headerTitle: "Failure keys the group hit" },
    { id: "sessions", header: "Sessions", align: "right", cell: (g) => g.sessions.toLocaleString("en-US") },
    { id: "agents", header: "Agents", cell: (g) => <NameList names={g.agents} max={2} /> },
    { id: "first", header: "First seen", cell: (g) => <RelativeTime date={g.firstSeen} now={now} /> },
    { id: "last", header: "Last seen", cell: (g) => <RelativeTime date={g.lastSeen} now={now} /> },
  ];
  return (
    <DataTable
      label="Failure groups"
      columns={columns}
      rows={groups}
      rowKey={(g) => g.fingerprint}
      rowHref={href}
      linkColumn="sample"
      empty={<EmptyState compact title="No failures in this range" description="Widen the time range or clear a filter." />}
    />
  );
}

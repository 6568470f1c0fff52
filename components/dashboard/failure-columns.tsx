import { MiddleTruncate } from "@/components/middle-truncate";
import type { Column } from "@/components/data-table";
import { FailureKey } from "@/components/failure-key";
import { RelativeTime } from "@/components/relative-time";
import { SeverityBadge } from "@/components/state-badge";
import type { FailureRow } from "@/server/dashboard/failures";

/** Columns of a failure history table (server-safe). `withKey` adds the failure key column. */
export function failureColumns(opts: { slug: string; now: Date; withKey: boolean }): Column<FailureRow>[] {
  const cols: Column<FailureRow>[] = [
    {
      id: "time",
      header: "Time",
      width: 110,
      nowrap: true,
      cell: (r) => <RelativeTime date={r.ts} now={opts.now} />,
    },
  ];
  if (opts.withKey) cols.push({ id: "key", header: "Failure key", minWidth: 220, cell: (r) => <FailureKey value={r.failureKey} wrap /> });
  cols.push(
    { id: "severity", header: "Severity", width: 130, cell: (r) => <SeverityBadge severity={r.severity} /> },
    {
      id: "error",
      header: "Error",
      minWidth: 240,
      cell: (r) => (
        <span className="failure-error" title={r.errorMessage ?? undefined}>
          {/* The status once: "504 Gateway Timeout" already starts with it. */}
          {r.httpStatus && !(r.errorMessage ?? "").trimStart().startsWith(String(r.httpStatus)) ? <span className="mono subtle">{r.httpStatus} </span> : null}
          {r.errorMessage ?? <span className="subtle">—</span>}
        </span>
      ),
    },
    // Room for a dated model name whole at 1440 px; longer ones cut in the middle.
    { id: "model", header: "Model", nowrap: true, minWidth: 220, cell: (r) => (r.model ? <MiddleTruncate value={r.model} mono className="text-sm" /> : <span className="subtle">—</span>) },
    {
      id: "session",
      header: "Session",
      cell: (r) => (
        <a href={`/w/${opts.slug}/sessions/${encodeURIComponent(r.sessionId)}`} className="session-link" title={`${r.agent} · ${r.sessionId}`}>
          <MiddleTruncate value={r.sessionId} mono className="text-sm" />
        </a>
      ),
    },
  );
  return cols;
}

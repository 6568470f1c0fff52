import { Fragment, type ReactNode } from "react";
import { formatNumber } from "@/components/format";
import { MiddleTruncate } from "@/components/middle-truncate";
import { RelativeTime } from "@/components/relative-time";
import type { SessionRow } from "@/server/dashboard/sessions-data";

const count = (n: number, one: string, many: string) => (n === 1 ? `1 ${one}` : `${formatNumber(n)} ${many}`);

/**
 * A session's second line in the phone list (≤ 640 px, two-line rows as in Linear's phone lists):
 * agent · model · calls · last event on one line, with failures and open calls when there are
 * any. The first line is the list's session id and status cells; the wide table's other cells
 * hide on phones (app/globals.css, `.sessions-table`). Hidden on wider screens, where the table's
 * columns say the same.
 */
export function SessionPhoneLine({ row, openCalls, now }: { row: SessionRow; openCalls: number; now: string }) {
  const parts: { key: string; node: ReactNode }[] = [{ key: "agent", node: <MiddleTruncate value={row.agent} tail={10} /> }];
  if (row.model) parts.push({ key: "model", node: <MiddleTruncate value={row.model} tail={10} mono /> });
  parts.push({ key: "calls", node: <span className="num">{count(row.callCount, "call", "calls")}</span> });
  if (row.failureCount > 0) parts.push({ key: "failures", node: <span className="num text-danger">{count(row.failureCount, "failure", "failures")}</span> });
  if (openCalls > 0) parts.push({ key: "open", node: <span className="text-warning">{count(openCalls, "open call", "open calls")}</span> });
  if (row.lastEventAt) parts.push({ key: "last", node: <RelativeTime date={row.lastEventAt} now={now} /> });
  return (
    <span className="session-phone-line" data-testid="session-phone-line">
      {parts.map((p, i) => (
        <Fragment key={p.key}>
          {i > 0 && (
            <span className="session-phone-sep" aria-hidden="true">
              ·
            </span>
          )}
          <span className={`session-phone-part session-phone-${p.key}`}>{p.node}</span>
        </Fragment>
      ))}
    </span>
  );
}

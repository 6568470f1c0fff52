/**
 * Durable acceptance of OTLP spans (SPEC 7.4 revision 2): every acknowledged span is written to
 * `otlp_span` before the 200, and its trace is marked due — at once when its root span is there
 * (in this export or an earlier one), else after the settle time. The applier (./applier.ts) maps and applies due traces later.
 */
import { storableStrings } from "@/db/storable";
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { otlpSpan, otlpTrace } from "@/db/schema";
import type { OtlpSpan } from "./decode";
import { redactSpan } from "./redact-span";

export interface StoredSpanJson extends Omit<OtlpSpan, "startTimeUnixNano" | "endTimeUnixNano" | "events"> {
  startTimeUnixNano: string | null;
  endTimeUnixNano: string | null;
  events: { name: string; timeUnixNano: string | null; attributes: OtlpSpan["attributes"] }[];
}

function spanToJson(s: OtlpSpan): StoredSpanJson {
  return {
    ...s,
    startTimeUnixNano: s.startTimeUnixNano?.toString() ?? null,
    endTimeUnixNano: s.endTimeUnixNano?.toString() ?? null,
    events: s.events.map((e) => ({ ...e, timeUnixNano: e.timeUnixNano?.toString() ?? null })),
  };
}

export function spanFromJson(j: StoredSpanJson): OtlpSpan {
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  return { ...j, startTimeUnixNano: big(j.startTimeUnixNano), endTimeUnixNano: big(j.endTimeUnixNano), events: j.events.map((e) => ({ ...e, timeUnixNano: big(e.timeUnixNano) })) };
}

export interface AcceptScope {
  workspaceId: string;
  organizationId: string;
}

/**
 * Stores spans (a span already stored is a duplicate and left as it is) and schedules their
 * traces. Returns the ids of the traces that are due now (their root span is stored).
 */
export async function acceptSpans(db: Db, scope: AcceptScope, spans: OtlpSpan[], receivedAt: number, settleMs: number): Promise<string[]> {
  if (!spans.length) return [];
  const received = new Date(receivedAt);
  const unique = new Map<string, OtlpSpan>();
  for (const s of spans) unique.set(`${s.traceId}:${s.spanId}`, s);
  const rows = [...unique.values()].map((s) => ({
    workspaceId: scope.workspaceId,
    traceId: s.traceId,
    spanId: s.spanId,
    span: storableStrings(spanToJson(redactSpan(s))),
    startAt: new Date(Number((s.startTimeUnixNano ?? 0n) / 1_000_000n)),
    receivedAt: received,
  }));
  // Per trace: due at once when its root arrived, else when it has been quiet for the settle time.
  const traces = new Map<string, boolean>();
  for (const s of unique.values()) traces.set(s.traceId, (traces.get(s.traceId) ?? false) || !s.parentSpanId);
  const traceRows = [...traces].map(([traceId, rootArrived]) => ({
    workspaceId: scope.workspaceId,
    traceId,
    organizationId: scope.organizationId,
    lastSpanAt: received,
    rootArrived,
    dueAt: rootArrived ? received : new Date(receivedAt + settleMs),
    pending: true,
  }));
  return db.transaction(async (tx) => {
    // Sorted, so concurrent exports of the same traces lock rows in one order (no deadlock).
    traceRows.sort((a, b) => (a.traceId < b.traceId ? -1 : 1));
    for (let i = 0; i < rows.length; i += 500) await tx.insert(otlpSpan).values(rows.slice(i, i + 500)).onConflictDoNothing();
    const scheduled = await tx
      .insert(otlpTrace)
      .values(traceRows)
      .onConflictDoUpdate({
        target: [otlpTrace.workspaceId, otlpTrace.traceId],
        set: {
          lastSpanAt: sql`excluded.last_span_at`,
          pending: sql`true`,
          rootArrived: sql`${otlpTrace.rootArrived} or excluded.root_arrived`,
          // Once the root is there, every span makes the trace due at once (a child exported in
          // parallel with its root, or a late one); otherwise the quiet period starts again.
          dueAt: sql`case when ${otlpTrace.rootArrived} or excluded.root_arrived then excluded.last_span_at else excluded.due_at end`,
        },
      })
      .returning({ traceId: otlpTrace.traceId, rootArrived: otlpTrace.rootArrived });
    return scheduled.filter((t) => t.rootArrived).map((t) => t.traceId);
  });
}

/**
 * Input validation of the agent API (SPEC 7.1, 7.2): zod for shapes, then a second pass for the
 * rules that depend on the time of receipt (ts range) and on sizes (args ≤ 64 KiB).
 * Every problem is reported with its field path; nothing of a rejected batch is written.
 */
import { z } from "zod";
import { SEVERITIES, type AgentEvent } from "@/server/engine/types";
import { sessionSettingsInputSchema } from "@/server/engine/settings";
import { scanJson, storableStrings } from "@/db/storable";

const MAX_EVENTS_PER_BATCH = 1000;
export const MAX_ARGS_BYTES = 64 * 1024;
export const MAX_PAST_MS = 30 * 24 * 3600 * 1000;
export const MAX_FUTURE_MS = 5 * 60 * 1000;

const id = z.string().min(1).max(128);
const name = z.string().min(1).max(256);
const tsInput = z.union([z.string().min(1).max(64), z.number()]);
const jsonObject = z.record(z.string(), z.unknown());
const turnIndex = z.number().int().min(0).max(1_000_000_000);

const base = {
  id,
  sessionId: id,
  ts: tsInput.optional(),
  model: z.string().min(1).max(200).optional(),
};

const toolBase = {
  callId: id,
  toolName: name,
  pluginName: name.optional(),
};

export const eventSchema = z.discriminatedUnion("type", [
  z.strictObject({ ...base, type: z.literal("session.start"), agent: z.string().min(1).max(200).optional(), settings: sessionSettingsInputSchema.optional() }),
  z.strictObject({ ...base, type: z.literal("session.end") }),
  z.strictObject({ ...base, type: z.literal("turn.start"), turnIndex }),
  z.strictObject({ ...base, type: z.literal("tool.call"), ...toolBase, args: jsonObject, turnIndex: turnIndex.optional() }),
  z.strictObject({
    ...base,
    type: z.literal("tool.result"),
    ...toolBase,
    args: jsonObject.optional(),
    success: z.boolean().optional(),
    error: z.union([z.string().max(65536), jsonObject]).nullable().optional(),
    result: z.unknown().optional(),
    httpStatus: z.number().int().min(100).max(599).optional(),
    severity: z.enum(SEVERITIES).optional(),
    domain: z.string().min(1).max(253).optional(),
    service: z.string().min(1).max(200).optional(),
    retryCount: z.number().int().min(0).optional(),
    transient: z.boolean().optional(),
    durationMs: z.number().min(0).optional(),
    turnIndex: turnIndex.optional(),
  }),
  z.strictObject({ ...base, type: z.literal("model.text"), text: z.string(), reasoningOnly: z.boolean().optional(), turnIndex: turnIndex.optional() }),
  z.strictObject({ ...base, type: z.literal("user.message"), text: z.string().optional(), automated: z.boolean().optional(), turnIndex: turnIndex.optional() }),
  z.strictObject({ ...base, type: z.literal("model.error"), error: z.string().min(1).max(65536) }),
  z.strictObject({
    ...base,
    type: z.literal("permission.resolved"),
    callId: id,
    toolName: name,
    granted: z.boolean(),
    method: z.string().min(1).max(200),
  }),
]);
export type EventInput = z.infer<typeof eventSchema>;

export const ingestInputSchema = z.strictObject({
  events: z
    .array(eventSchema)
    .min(1, "A batch needs at least one event")
    .max(MAX_EVENTS_PER_BATCH, `A batch holds at most ${MAX_EVENTS_PER_BATCH} events`),
});

export const guardInputSchema = z.strictObject({
  id,
  sessionId: id,
  callId: id,
  toolName: name,
  pluginName: name.optional(),
  args: jsonObject,
  model: z.string().min(1).max(200).optional(),
  ts: tsInput.optional(),
  turnIndex: turnIndex.optional(),
  /** Hold the request up to this long for a person's decision when the answer would be `ask` (SPEC 7.2). */
  waitForApprovalSeconds: z.number().min(0).max(120).optional(),
});
export type GuardInput = z.infer<typeof guardInputSchema>;

export interface FieldIssue {
  path: (string | number)[];
  message: string;
}

/** Thrown for input problems found after the zod pass; the tRPC layer turns it into a 400. */
export class InputIssuesError extends Error {
  constructor(public readonly issues: FieldIssue[]) {
    super(issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
    this.name = "InputIssuesError";
  }
}

/** Parses `ts` (ISO 8601 or epoch ms) and checks the accepted range; null + issue when not. */
function parseEventTime(ts: string | number | undefined, receivedAt: number): { ms: number } | { error: string } {
  if (ts === undefined) return { ms: receivedAt };
  let ms: number;
  if (typeof ts === "number") {
    if (!Number.isFinite(ts)) return { error: "must be an ISO 8601 string or epoch milliseconds" };
    ms = ts;
  } else {
    if (!/^\d{4}-\d{2}-\d{2}T/.test(ts)) return { error: "must be an ISO 8601 date-time or epoch milliseconds" };
    ms = Date.parse(ts);
    if (Number.isNaN(ms)) return { error: "is not a valid ISO 8601 date-time" };
  }
  if (ms < receivedAt - MAX_PAST_MS) return { error: "is more than 30 days in the past" };
  if (ms > receivedAt + MAX_FUTURE_MS) return { error: "is more than 5 minutes in the future" };
  return { ms: Math.floor(ms) };
}

function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? "", "utf8");
}

/**
 * The second validation pass: times and sizes. Returns engine events (ts as epoch ms) or throws
 * InputIssuesError naming every offending field (`events.3.ts`).
 */
export function normalizeEvents(events: EventInput[], receivedAt: number, pathPrefix: (string | number)[] = ["events"]): AgentEvent[] {
  const issues: FieldIssue[] = [];
  const out: AgentEvent[] = [];
  events.forEach((e, i) => {
    const at = parseEventTime(e.ts, receivedAt);
    if ("error" in at) issues.push({ path: [...pathPrefix, i, "ts"], message: `ts ${at.error}` });
    // Args cannot exceed the limit when the whole event's JSON is under a third of it (a UTF-16 unit
    // is at most 3 bytes of UTF-8), and a string holds no character to replace when the walk saw
    // none. Nearly every event is both: a walk over its values tells (~4 times cheaper than
    // JSON.stringify). Only the args of the rest are serialized, never a long text's event whole.
    const scan = scanJson(e);
    const mayHaveLargeArgs = scan.unsure || scan.maxJsonLength * 3 > MAX_ARGS_BYTES;
    if (mayHaveLargeArgs && (e.type === "tool.call" || e.type === "tool.result") && e.args !== undefined && jsonBytes(e.args) > MAX_ARGS_BYTES) {
      issues.push({ path: [...pathPrefix, i, "args"], message: "args exceed 64 KiB of JSON" });
    }
    if ("ms" in at) {
      const ev = { ...(scan.unsure ? storableStrings(e) : e), ts: at.ms } as AgentEvent;
      if (ev.type === "tool.result" && ev.error === null) delete (ev as { error?: unknown }).error;
      out.push(ev);
    }
  });
  if (issues.length) throw new InputIssuesError(issues);
  return out;
}

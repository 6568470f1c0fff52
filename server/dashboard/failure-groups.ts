/** `failures.groups` (SPEC 7.6): the Failures page's groups for a window of the dashboard's range vocabulary. */
import type { Db } from "@/db/client";
import { listFailureGroups } from "./failures";
import { readTimeWindow, type RangePreset } from "./time-range";

/** A week: the causes that matter now, over a bounded scan. */
const FAILURE_GROUPS_DEFAULT_RANGE: RangePreset = "7d";

export async function failureGroups(db: Db, workspaceId: string, input: { range?: RangePreset; toolName?: string }, now = new Date()) {
  const range = input.range ?? FAILURE_GROUPS_DEFAULT_RANGE;
  const window = readTimeWindow({ range }, FAILURE_GROUPS_DEFAULT_RANGE, now);
  const groups = await listFailureGroups(db, workspaceId, { from: window.from, to: window.to, toolName: input.toolName });
  return { range, label: window.label, groups };
}

/**
 * A tool call with no result after `open_call_seconds` (SPEC 5.1). Time, not events: the detector
 * never fires on an event; the open-call sweep finds the call and the engine raises it once, minor
 * (`raiseHungCall` in ../open-calls.ts). Its ladder and texts are a pattern's like any other.
 */
import { stallPattern } from "./pattern";

export const hungCall = stallPattern({
  name: "hung_call",
  counts: "a tool call still without a result after `open_call_seconds` (found by the sweep, raised once per call as minor)",
  ladder: { minor: 1, moderate: 2, severe: 3 },
  minCount: 1,
  nudges: {
    minor: "Your call to {tool_name} has had no result for a long time. Do not keep waiting on it: check whether it is still running, cancel it or try another way.",
    moderate: "NOTICE: {count} calls have had no result for a long time (the latest to {tool_name}). Stop waiting on them: check what they were doing and change your plan.",
    severe: "BLOCKED: {count} calls without a result (the latest to {tool_name}). System pausing for user input.",
  },
  detect() {
    // Found by the sweep given the time (open-calls.ts), never by the fold of an event.
  },
  scope: () => null,
});

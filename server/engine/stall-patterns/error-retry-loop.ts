/** The identical call failing again and again with the same error. */
import { stallPattern } from "./pattern";
import { identityOf } from "./tracks";

export const errorRetryLoop = stallPattern({
  name: "error_retry_loop",
  counts: "identical calls failing with the same error",
  ladder: { minor: 3, moderate: 4, severe: 5 },
  minCount: 2,
  nudges: {
    minor:
      "{tool_name} {args} failed {count} times with the same error. Read the error and change the arguments or the approach instead of retrying unchanged.",
    moderate:
      "NOTICE: You are retrying a failing call unchanged: {tool_name} {args}, {count} identical failures. Stop, fix what the error says, or use another tool.",
    severe: "BLOCKED: {count} identical failing calls to {tool_name} {args}. System pausing for user intervention.",
  },
  detect(s, _classes, found) {
    const f = s.failureRun;
    if (f) found(f.count, f.toolName, f.preview, identityOf(f.toolName, f.argsHash));
  },
  scope: (s) => (s.failureRun ? `f${s.failureRun.start}` : null),
});

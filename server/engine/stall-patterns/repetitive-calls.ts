/** The identical call (same tool, same arguments without the volatile fields) with the same result, again and again. */
import { stallPattern } from "./pattern";
import { errorRetryLoop } from "./error-retry-loop";
import { identityOf, isFailedOutcome } from "./tracks";

export const repetitiveCalls = stallPattern({
  name: "repetitive_calls",
  counts: "identical calls in a row (same tool, args and result)",
  ladder: { minor: 3, moderate: 4, severe: 5 },
  minCount: 2,
  nudges: {
    minor:
      "You've called {tool_name} {args} {count} times with the same result. Use what it returned, or change the arguments, before calling it again.",
    moderate:
      "NOTICE: You are in a loop: {tool_name} {args} called {count} times, same result each time. Repeating it will not change the answer. Act on the result or try a different approach.",
    severe:
      "BLOCKED: {tool_name} {args} was called {count} times with the same result. The system is pausing for user intervention.",
  },
  detect(s, _classes, found) {
    if (s.run) found(s.run.length, s.run.toolName, s.run.preview, identityOf(s.run.toolName, s.run.argsHash));
  },
  scope: (s) => (s.run ? `r${s.run.start}` : null),
  // Identical calls that fail: "read the error", not "use what it returned" (SPEC 5.1), naming the failures seen.
  nudgeInstead(s) {
    const run = s.run;
    if (!run || !isFailedOutcome(run.outcome)) return null;
    const f = s.failureRun;
    const failures = f && f.toolName === run.toolName && f.argsHash === run.argsHash ? f.count : run.length;
    return { nudges: errorRetryLoop.nudges, count: failures };
  },
});

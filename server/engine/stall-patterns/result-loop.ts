/** Differently worded calls of one tool that keep returning the same thing (a rephrased search). */
import { stallPattern } from "./pattern";

export const resultLoop = stallPattern({
  name: "result_loop",
  counts: "results of one tool in a row, called differently, with the same successful result and no action between",
  ladder: { minor: 3, moderate: 4, severe: 5 },
  minCount: 2,
  nudges: {
    minor:
      "{tool_name} returned the same result {count} times for differently worded calls. Rewording will not change it: use what it returned, or look elsewhere.",
    moderate:
      "NOTICE: {count} different {tool_name} calls in a row returned the same result. Stop rephrasing: act on that result, or use another tool or source.",
    severe: "BLOCKED: {tool_name} returned the same result to {count} differently worded calls. System pausing for user input.",
  },
  detect(s, _classes, found) {
    const r = s.resultRun;
    if (r) found(r.count, r.toolName);
  },
  scope: (s) => (s.resultRun ? `l${s.resultRun.start}` : null),
});

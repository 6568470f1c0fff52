/** Listing tools or schemas again and again instead of acting. The texts are the seed's. */
import { stallPattern } from "./pattern";
import { lastCall } from "./tracks";

export const introspectionLoop = stallPattern({
  name: "introspection_loop",
  counts: "introspection calls in a row",
  ladder: { minor: 2, moderate: 4, severe: 6 },
  minCount: 2,
  nudges: {
    minor: "You have the tool list. Proceed with the actual task instead of re-querying tools.",
    moderate: "NOTICE: Stop querying tool metadata. You have sufficient information. Execute the task.",
    severe: "BLOCKED: Stuck in introspection loop. System pausing for user guidance.",
  },
  detect(s, _classes, found) {
    if (s.introspectionRun) found(s.introspectionRun.count, lastCall(s)?.toolName ?? "");
  },
  scope: (s) => (s.introspectionRun ? `i${s.introspectionRun.start}` : null),
});

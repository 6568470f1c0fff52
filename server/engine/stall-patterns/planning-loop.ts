/** Model texts in a row with no tool call: planning without executing. */
import { stallPattern } from "./pattern";
import { lastCall } from "./tracks";

export const planningLoop = stallPattern({
  name: "planning_loop",
  counts: "model texts in a row without a tool call (identical texts count double)",
  ladder: { minor: 3, moderate: 4, severe: 6 },
  minCount: 2,
  nudges: {
    minor: "You've written {count} messages without calling a tool. Pick the first step of your plan and call the tool for it.",
    moderate: "NOTICE: {count} messages of planning without any tool call. Stop planning and execute the first step now.",
    severe: "BLOCKED: Stuck planning without execution ({count} messages). System pausing for user input.",
  },
  detect(s, _classes, found) {
    if (s.textRun) found(s.textRun.count, lastCall(s)?.toolName ?? "a tool");
  },
  scope: (s) => (s.textRun ? `t${s.textRun.start}` : null),
});

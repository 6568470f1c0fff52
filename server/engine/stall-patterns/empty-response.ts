/** Empty or reasoning-only model responses in a row. */
import { stallPattern } from "./pattern";

export const emptyResponse = stallPattern({
  name: "empty_response",
  counts: "empty or reasoning-only responses in a row",
  ladder: { minor: 1, moderate: 2, severe: 3 },
  minCount: 1,
  nudges: {
    minor: "Your last response was empty. Reply with your next step: a tool call or an answer.",
    moderate: "NOTICE: {count} empty responses in a row. Call a tool or answer in plain text; do not reply with reasoning only.",
    severe: "BLOCKED: {count} empty responses in a row. System pausing for user input.",
  },
  detect(s, _classes, found) {
    if (s.emptyRun) found(s.emptyRun.count, "");
  },
  scope: (s) => (s.emptyRun ? `e${s.emptyRun.start}` : null),
});

/** Flip-flopping between two identical calls with unchanged results: A B A B. */
import { stallPattern } from "./pattern";

export const alternatingCalls = stallPattern({
  name: "alternating_calls",
  counts: "A B A B between two identical calls with unchanged results",
  ladder: { minor: 4, moderate: 6, severe: 8 },
  minCount: 4,
  nudges: {
    minor:
      "You are alternating between the same two calls ({tool_name}) and getting the same results. Decide what the results tell you and move on.",
    moderate:
      "NOTICE: You are going back and forth between {tool_name} ({count} calls) with unchanged results. Break the cycle: act on what you have or try something else.",
    severe: "BLOCKED: Detected {count} calls alternating between {tool_name}. System pausing for user intervention.",
  },
  detect(s, _classes, found) {
    const a = s.alternating;
    if (a) found(a.length, `${a.names[0]} and ${a.names[1]}`);
  },
  scope: (s) => (s.alternating ? `a${s.alternating.start}` : null),
});

/** Naming an action tool in text again and again without calling it. */
import { stallPattern } from "./pattern";

export const toolAvoidance = stallPattern({
  name: "tool_avoidance",
  counts: "an action tool named in text without being called",
  ladder: { minor: 2, moderate: 3, severe: 4 },
  minCount: 2,
  nudges: {
    minor: "You've mentioned {tool_name} {count} times without calling it. If you intend to use it, call it.",
    moderate: "NOTICE: You keep naming {tool_name} ({count} times) but never call it. Call {tool_name} NOW or change plan.",
    severe: "BLOCKED: {tool_name} named {count} times without being called. System pausing for user input.",
  },
  detect(s, _classes, found) {
    // The most mentioned tool; ties go to the first name in order.
    let worstKey: string | null = null;
    let worstName = "";
    let worstCount = 0;
    for (const key in s.stretch.mentions) {
      const m = s.stretch.mentions[key];
      if (worstKey === null || m.count > worstCount || (m.count === worstCount && key < worstKey)) {
        worstKey = key;
        worstName = m.toolName;
        worstCount = m.count;
      }
    }
    if (worstKey !== null) found(worstCount, worstName);
  },
  scope: (s) => `s${s.stretch.id}`,
});

/** Re-reading what was already read in the stretch, without acting (reading new things is progress). */
import { stallPattern } from "./pattern";
import { lastCall } from "./tracks";

export const readOnlyLoop = stallPattern({
  name: "read_only_loop",
  counts: "re-reads of something already read since the last action",
  ladder: { minor: 3, moderate: 5, severe: 8 },
  minCount: 1,
  nudges: {
    minor:
      "You've re-read things you already read {count} times without acting (last: {tool_name}). Use what you read and make the change.",
    moderate:
      "NOTICE: {count} repeated reads and no action. Re-reading will not add information: make the change or state what is missing.",
    severe: "BLOCKED: {count} repeated reads without any action. System pausing for user guidance.",
  },
  detect(s, _classes, found) {
    if (s.stretch.rereads > 0) found(s.stretch.rereads, s.stretch.lastReread ?? lastCall(s)?.toolName ?? "");
  },
  scope: (s) => `s${s.stretch.id}`,
});

/**
 * Announcing an action ("let me…") and then not doing it (SPEC 5.1): the fold counts only the
 * announcements followed by nothing new — no call before the next text, or only repeated or
 * introspection calls. "Let me look at the test" and a read of the test is progress. The texts are
 * the seed's.
 */
import { stallPattern } from "./pattern";
import { inToolClass, lastCall } from "./tracks";

/** Recent calls in which an action clears the announcements. */
const RECENT_CALLS_CHECKED = 3;

export const announceNoAction = stallPattern({
  name: "announce_no_action",
  counts: "\"let me…\" announcements followed by nothing new (no call, or only repeated or introspection calls)",
  ladder: { minor: 2, moderate: 3, severe: 4 },
  minCount: 2,
  nudges: {
    minor: "You mentioned proceeding but haven't called an action tool yet. Please execute the planned action.",
    moderate: "NOTICE: You've announced action {count} times without executing. Call the appropriate tool NOW.",
    severe: "BLOCKED: Repeated announcements without action. System pausing for user input.",
  },
  detect(s, classes, found) {
    if (s.stretch.announcements === 0) return;
    for (let i = Math.max(0, s.calls.length - RECENT_CALLS_CHECKED); i < s.calls.length; i++) {
      if (inToolClass(classes.actionTools, s.calls[i].toolName)) return;
    }
    found(s.stretch.announcements, lastCall(s)?.toolName ?? "an action tool");
  },
  scope: (s) => `s${s.stretch.id}`,
});

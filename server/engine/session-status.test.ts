import { describe, expect, it } from "vitest";
import { sessionStatus } from "./session-status";

const T0 = Date.UTC(2026, 11, 6, 12, 0, 0);
const running = { ended: false, held: false };

describe("session status (SPEC 5.1, 7.6)", () => {
  it("active until session_idle_minutes pass without an event, then idle", () => {
    expect(sessionStatus({ ...running, lastEventAt: T0 }, 30, T0 + 30 * 60_000)).toBe("active");
    expect(sessionStatus({ ...running, lastEventAt: T0 }, 30, T0 + 30 * 60_000 + 1)).toBe("idle");
    expect(sessionStatus({ ...running, lastEventAt: T0 }, 5, T0 + 5 * 60_000 + 1)).toBe("idle");
  });

  it("an idle session's next event makes it active again", () => {
    const now = T0 + 45 * 60_000;
    expect(sessionStatus({ ...running, lastEventAt: T0 }, 30, now)).toBe("idle");
    expect(sessionStatus({ ...running, lastEventAt: now }, 30, now)).toBe("active");
  });

  it("ended wins over held, held over idle; no event yet is active", () => {
    expect(sessionStatus({ ended: true, held: true, lastEventAt: T0 }, 30, T0 + 86_400_000)).toBe("ended");
    expect(sessionStatus({ ended: false, held: true, lastEventAt: T0 }, 30, T0 + 86_400_000)).toBe("paused");
    expect(sessionStatus({ ...running, lastEventAt: null }, 30, T0)).toBe("active");
  });
});

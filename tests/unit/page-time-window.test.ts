import { describe, expect, it } from "vitest";
import { rangeCookieParams, rangeCookieValue, resolvePageWindow } from "@/components/dashboard/range-cookie";
import { DEFAULT_RANGE, readTimeWindow } from "@/server/dashboard/time-range";

const now = new Date("2026-12-06T12:00:00Z");

describe("the page's time window: URL, then the remembered pick, then the default", () => {
  it("opens on the one default with the range written out (exports and links carry it)", () => {
    const r = resolvePageWindow({ tool: "Bash" }, undefined, now);
    expect(r.window.range).toBe(DEFAULT_RANGE);
    expect(r.sp).toEqual({ tool: "Bash", range: DEFAULT_RANGE });
  });

  it("opens on the remembered pick when the URL names no window", () => {
    expect(resolvePageWindow({}, "range=30d", now).window.range).toBe("30d");
    const custom = resolvePageWindow({ q: "x" }, "from=2026-11-01&to=2026-11-05", now);
    expect(custom.window).toMatchObject({ range: "custom", fromDay: "2026-11-01", toDay: "2026-11-05" });
    expect(custom.sp).toEqual({ q: "x", from: "2026-11-01", to: "2026-11-05" });
  });

  it("an explicit ?range= or ?from= in the URL wins over the remembered pick", () => {
    expect(resolvePageWindow({ range: "all" }, "range=30d", now).window.range).toBe("all");
    const days = resolvePageWindow({ from: "2026-12-01" }, "range=30d", now);
    expect(days.window.range).toBe("custom");
    expect(days.sp).toEqual({ from: "2026-12-01" });
  });

  it("an unknown range reads as the default, and a broken cookie is ignored", () => {
    expect(resolvePageWindow({ range: "fortnight" }, undefined, now).sp).toEqual({ range: DEFAULT_RANGE });
    expect(resolvePageWindow({}, "range=forever", now).window.range).toBe(DEFAULT_RANGE);
    expect(resolvePageWindow({}, "%E0%A4%A", now).window.range).toBe(DEFAULT_RANGE);
    expect(rangeCookieParams("page=3&tool=Bash")).toBeNull();
  });

  it("the cookie holds the window as the URL would", () => {
    for (const sp of [{ range: "24h" }, { from: "2026-11-01", to: "2026-11-05" }, { from: "2026-11-01" }]) {
      const w = readTimeWindow(sp, DEFAULT_RANGE, now);
      expect(resolvePageWindow({}, rangeCookieValue(w), now).window).toEqual(w);
    }
  });
});

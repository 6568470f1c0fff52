import { describe, expect, it } from "vitest";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { ladderOf } from "./ladder-check";
import { hungCall } from "./hung-call";
import { raiseHungCall } from "../open-calls";

describe("hung_call", () => {
  it("is never found by the fold of events: calls without results, however many, raise nothing", () => {
    const t = new Trace();
    for (let i = 0; i < 12; i++) t.call("fetch_page", { url: `https://example.com/${i}` });
    t.text("Waiting for the pages.");
    expect(t.patternsOf("hung_call")).toEqual([]);
  });

  it("its minor text names the tool and says to stop waiting", () => {
    const r = raiseHungCall("s1", { callId: "c1", toolName: "deploy", since: 0 }, { patternDetectionEnabled: true, nudgeEnabled: true, nudgeLevel: "interrupt" });
    expect(r?.nudge?.message).toContain("deploy");
    expect(r?.nudge?.message).toMatch(/Do not keep waiting/);
    expect(hungCall.nudges.minor).toContain("{tool_name}");
  });

  it("keeps the registry's ladder shape", () => {
    expect(ladderOf("hung_call")).toEqual([1, 2, 3]);
  });
});

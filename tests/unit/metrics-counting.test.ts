/** Counting can be turned off (`VIGIL_METRICS=off`, the bench's comparison): nothing is counted then, and counting resumes when on. */
import { afterEach, describe, expect, it } from "vitest";
import { noteGuardCheck, noteIngested, processRegistry, setMetricsCounting } from "@/server/metrics";

const WS = "ws-metrics-counting";
async function counted(name: string): Promise<number> {
  const metric = (await processRegistry.getMetricsAsJSON()).find((m) => m.name === name)!;
  return (metric.values as { labels: Record<string, unknown>; value: number; metricName?: string }[])
    // A counter's values, or a histogram's observation count.
    .filter((v) => v.labels.workspace === WS && (v.metricName === undefined || v.metricName.endsWith("_count")))
    .reduce((n, v) => n + v.value, 0);
}

describe("metrics counting switch", () => {
  afterEach(() => setMetricsCounting(true));

  it("counts nothing while off and counts again when on", async () => {
    setMetricsCounting(false);
    noteGuardCheck(WS, "agent", "tool_a", "allow", "none", 0.001);
    noteIngested(WS, "trpc", 5);
    expect(await counted("vigil_guard_decisions_total")).toBe(0);
    expect(await counted("vigil_guard_check_duration_seconds")).toBe(0);
    expect(await counted("vigil_ingest_events_total")).toBe(0);

    setMetricsCounting(true);
    noteGuardCheck(WS, "agent", "tool_a", "allow", "none", 0.001);
    noteIngested(WS, "trpc", 5);
    expect(await counted("vigil_guard_decisions_total")).toBe(1);
    expect(await counted("vigil_guard_check_duration_seconds")).toBe(1);
    expect(await counted("vigil_ingest_events_total")).toBe(5);
  });
});

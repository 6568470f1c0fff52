/**
 * Sentry's worked cases for a model rephrasing a search that keeps returning the same thing
 * (SPEC 5.1 `result_loop`): three `searchDocumentation` queries worded differently that return the
 * same document are a loop; the same queries returning different documents, or a search followed by
 * acting on what it found, are not.
 */
import { describe, expect, it } from "vitest";
import { Trace } from "./trace";

const sameDoc = { ok: { results: [{ title: "Sampling", path: "/platform/python/configuration/sampling/" }] } };

describe("Sentry: paraphrased searches that return the same document", () => {
  it("three reworded searchDocumentation queries, same document → result_loop minor and a gentle nudge at the third", () => {
    const t = new Trace();
    t.user("How do I lower the trace sample rate in the Python SDK?");
    t.act("searchDocumentation", { query: "python sdk trace sample rate" }, sameDoc);
    t.act("searchDocumentation", { query: "how to reduce tracing sample rate python" }, sameDoc);
    expect(t.intervened).toBe(false);
    t.act("searchDocumentation", { query: "configure traces_sample_rate sentry python" }, sameDoc);
    expect(t.patternsOf("result_loop").map((p) => [p.severity, p.count])).toEqual([["minor", 3]]);
    expect(t.nudges().map((n) => [n.nudgeType, n.patternType])).toEqual([["gentle", "result_loop"]]);
    expect(t.nudges()[0].message).toContain("searchDocumentation returned the same result 3 times");
  });

  it("rewording on and on climbs to moderate at the fourth and pauses at the fifth", () => {
    const t = new Trace();
    const queries = ["sample rate", "sampling rate", "trace sampling", "traces_sample_rate", "tracesSampleRate option"];
    for (const query of queries) t.act("searchDocumentation", { query }, sameDoc);
    expect(t.patternsOf("result_loop").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]);
    expect(t.nudges().map((n) => n.nudgeType)).toEqual(["gentle", "direct", "interrupt"]);
    expect(t.paused).toBe(true);
  });

  it("reworded queries that each find something different are research, not a loop", () => {
    const t = new Trace();
    for (const [i, query] of ["sample rate", "profiles sample rate", "sampling function", "before_send"].entries()) {
      t.act("searchDocumentation", { query }, { ok: { results: [{ title: `doc ${i}`, path: `/doc/${i}` }] } });
    }
    expect(t.effects).toEqual([]);
  });
});

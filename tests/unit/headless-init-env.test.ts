import { describe, expect, it } from "vitest";
import { headlessInitProblems } from "@/server/headless-init";
import { otlpTimingFromEnv } from "@/server/otlp/applier";

const valid = {
  VIGIL_INIT_ORG: "Acme",
  VIGIL_INIT_WORKSPACE: "prod",
  VIGIL_INIT_API_KEY: "vgl_0123456789abcdefghij",
  VIGIL_INIT_USER_EMAIL: "ops@example.com",
  VIGIL_INIT_USER_PASSWORD: "long-enough",
};

describe("headlessInitProblems (start-up checks)", () => {
  it("nothing set, or a valid set: no problem", () => {
    expect(headlessInitProblems({})).toEqual([]);
    expect(headlessInitProblems(valid)).toEqual([]);
    expect(headlessInitProblems({ VIGIL_INIT_ORG: "Acme" })).toEqual([]);
  });

  it.each([
    ["a one-character slug", { VIGIL_INIT_WORKSPACE: "x" }, 'VIGIL_INIT_WORKSPACE "x" is not a valid slug'],
    ["an upper-case slug", { VIGIL_INIT_WORKSPACE: "Prod" }, "VIGIL_INIT_WORKSPACE"],
    ["a key without vgl_", { VIGIL_INIT_API_KEY: "sk_0123456789abcdefghij" }, "VIGIL_INIT_API_KEY must start with vgl_"],
    ["a short key", { VIGIL_INIT_API_KEY: "vgl_short" }, "at least 20 characters"],
    ["a bad email", { VIGIL_INIT_USER_EMAIL: "ops-at-example" }, 'VIGIL_INIT_USER_EMAIL "ops-at-example" is not an email address'],
    ["a short password", { VIGIL_INIT_USER_PASSWORD: "short" }, "VIGIL_INIT_USER_PASSWORD must be at least 8 characters"],
    ["no organization", { VIGIL_INIT_ORG: undefined }, "VIGIL_INIT_ORG is required"],
    ["a key without a workspace", { VIGIL_INIT_WORKSPACE: undefined }, "VIGIL_INIT_API_KEY needs VIGIL_INIT_WORKSPACE"],
    ["an email without a password", { VIGIL_INIT_USER_PASSWORD: undefined }, "VIGIL_INIT_USER_PASSWORD is required"],
    ["a password without an email", { VIGIL_INIT_USER_EMAIL: undefined }, "VIGIL_INIT_USER_EMAIL is required"],
  ])("%s is named", (_label, change, message) => {
    const problems = headlessInitProblems({ ...valid, ...change });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });
});

describe("otlpTimingFromEnv", () => {
  it("defaults 10 s settle and 30 min idle; reads both; rejects nonsense naming the variable", () => {
    expect(otlpTimingFromEnv({})).toEqual({ settleMs: 10_000, idleMs: 1_800_000 });
    expect(otlpTimingFromEnv({ VIGIL_OTLP_TRACE_SETTLE_SECONDS: "2.5", VIGIL_OTLP_SESSION_IDLE_MINUTES: "1" })).toEqual({ settleMs: 2_500, idleMs: 60_000 });
    expect(() => otlpTimingFromEnv({ VIGIL_OTLP_TRACE_SETTLE_SECONDS: "soon" })).toThrow(/VIGIL_OTLP_TRACE_SETTLE_SECONDS/);
    expect(() => otlpTimingFromEnv({ VIGIL_OTLP_SESSION_IDLE_MINUTES: "-1" })).toThrow(/VIGIL_OTLP_SESSION_IDLE_MINUTES/);
  });
});

/**
 * Overload is refused, not queued (issue 15): beyond VIGIL_MAX_CONCURRENT_REQUESTS an instance
 * answers 503 + Retry-After at once; accepted requests succeed; a call waiting for a person holds
 * no slot.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { requestsInFlight, setConcurrencyLimit, withCapacity } from "@/server/http/capacity";
import { eventLoopLagMs, setLagLimit } from "@/server/http/event-loop-lag";
import { earlyRefusal } from "@/server/agent-api/routes";
import { handleHookRequest } from "@/server/agent-api/hooks";
import { handleOtlpTraces } from "@/server/agent-api/otlp";

describe.each(DATABASE_KINDS)("overload on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const app = useTestApp(kind);
  beforeAll(async () => {
    ws = await app.seedWorkspace();
  });
  let previous = 0;
  afterEach(() => {
    setConcurrencyLimit(previous);
  });

  const guard = (sessionId: string, extra: Record<string, unknown> = {}) =>
    app.mutation("guard.check", { id: uid(), sessionId, callId: uid("c"), toolName: "Read", args: { file_path: "/a.ts" }, ...extra }, { key: ws.key });

  it("beyond the limit: 503 with Retry-After at once, the accepted ones answered, nothing else fails", async () => {
    previous = setConcurrencyLimit(4);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => guard(`s-${i % 8}`)));
    const statuses = answers.map((a) => a.status);
    const ok = statuses.filter((s) => s === 200).length;
    const refused = answers.filter((a) => a.status === 503);
    expect(ok).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeGreaterThan(0);
    expect(ok + refused.length).toBe(40);
    for (const r of refused) {
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.body.error?.data).toMatchObject({ code: "SERVICE_UNAVAILABLE", httpStatus: 503 });
    }
    expect(requestsInFlight()).toBe(0);
    // Once the burst is over, the instance serves again.
    expect((await guard("s-after")).status).toBe(200);
  });

  it("while the thread is too far behind, new requests are refused with 503 + Retry-After; once it caught up they are served", async () => {
    const previousLag = setLagLimit(50);
    try {
      expect(eventLoopLagMs()).toBeLessThan(50); // starts measuring
      expect((await guard("s-lag-before")).status).toBe(200);
      // Saturate the thread for ~0.6 s: busy in 100 ms pieces, the timer gets in between each.
      const until = performance.now() + 600;
      await new Promise<void>((resolve) => {
        const busy = () => {
          const end = performance.now() + 100;
          while (performance.now() < end);
          if (performance.now() < until) setImmediate(busy);
          else resolve();
        };
        busy();
      });
      expect(eventLoopLagMs()).toBeGreaterThan(50);
      const refusal = earlyRefusal("POST", "/api/trpc/guard.check");
      expect(refusal?.status).toBe(503);
      expect(refusal?.headers.get("retry-after")).toBe("1");
      const refused = await guard("s-lag");
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      // A few on-time samples later the instance serves again.
      await new Promise((r) => setTimeout(r, 300));
      expect(eventLoopLagMs()).toBeLessThan(50);
      expect((await guard("s-lag-after")).status).toBe(200);
    } finally {
      setLagLimit(previousLag);
    }
  });

  it("the fast path refuses tRPC requests at capacity before reading them, with the handler's own answer", async () => {
    previous = setConcurrencyLimit(1);
    expect(earlyRefusal("POST", "/api/trpc/guard.check")).toBeNull();
    let release!: () => void;
    const held = withCapacity(() => new Promise<Response>((r) => (release = () => r(new Response("ok")))), () => new Response("refused", { status: 503 }));
    try {
      const refusal = earlyRefusal("POST", "/api/trpc/guard.check");
      expect(refusal?.status).toBe(503);
      expect(refusal?.headers.get("retry-after")).toBe("1");
      const viaHandler = await guard("s-full");
      expect(viaHandler.status).toBe(503);
      expect(await refusal!.json()).toEqual(viaHandler.body);
      // Only tRPC: health, hooks and OTLP keep their own answers (hooks answer in the agent's terms).
      expect(earlyRefusal("GET", "/api/health")).toBeNull();
      expect(earlyRefusal("POST", "/api/hooks/claude-code")).toBeNull();
      expect(earlyRefusal("POST", "/api/otlp/v1/traces")).toBeNull();
    } finally {
      release();
      await held;
    }
    expect(earlyRefusal("POST", "/api/trpc/guard.check")).toBeNull();
  });

  it("hooks and OTLP answer 503 + Retry-After in their own terms when the instance is full", async () => {
    previous = setConcurrencyLimit(1);
    // Hold the only slot with a guard.check that waits on nothing but the database.
    const body = JSON.stringify({ session_id: "s-hook", hook_event_name: "UserPromptSubmit", prompt: "hi" });
    const burst = await Promise.all(
      Array.from({ length: 6 }, () =>
        handleHookRequest(new Request("http://vigil.test/api/hooks/claude-code", { method: "POST", headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" }, body }), app.runtime, "claude-code"),
      ),
    );
    expect(burst.map((r) => r.status).sort()).toContain(503);
    const refusedHook = burst.find((r) => r.status === 503)!;
    expect(refusedHook.headers.get("retry-after")).toBe("1");
    expect(burst.every((r) => r.status === 200 || r.status === 503)).toBe(true);

    const otlp = await Promise.all(
      Array.from({ length: 6 }, () =>
        handleOtlpTraces(new Request("http://vigil.test/api/otlp/v1/traces", { method: "POST", headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" }, body: JSON.stringify({ resourceSpans: [] }) }), app.runtime),
      ),
    );
    expect(otlp.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    expect(otlp.find((r) => r.status === 503)?.headers.get("retry-after")).toBe("1");
  });

  it("a call waiting for a person gives its slot back: with a limit of 1, other requests are served meanwhile", async () => {
    const s = uid("s");
    const url = "https://api.example.com/v1/users";
    await app.mutation("ingest.events", { events: [1, 2, 3].map(() => result(s, "http_request", { url }, { success: false, httpStatus: 503 })) }, { key: ws.key });
    previous = setConcurrencyLimit(1);
    const waiting = app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid("c"), toolName: "http_request", args: { url }, waitForApprovalSeconds: 1.5 }, { key: ws.key });
    await new Promise((r) => setTimeout(r, 400));
    const other = await guard("s-meanwhile");
    expect(other.status).toBe(200);
    const out = await waiting;
    expect(out.status).toBe(200);
    expect(out.body.result!.data.decision).toBe("ask");
    expect(requestsInFlight()).toBe(0);
  });
});

describe("VIGIL_MAX_CONCURRENT_REQUESTS", () => {
  it("is a whole number ≥ 0; anything else stops start-up naming the variable", async () => {
    const { limitFromEnv, DEFAULT_MAX_CONCURRENT_REQUESTS } = await import("@/server/http/capacity");
    expect(limitFromEnv(undefined)).toBe(DEFAULT_MAX_CONCURRENT_REQUESTS);
    expect(limitFromEnv("0")).toBe(0);
    expect(limitFromEnv("128")).toBe(128);
    expect(() => limitFromEnv("-1")).toThrow(/VIGIL_MAX_CONCURRENT_REQUESTS/);
    expect(() => limitFromEnv("lots")).toThrow(/VIGIL_MAX_CONCURRENT_REQUESTS/);
  });
});

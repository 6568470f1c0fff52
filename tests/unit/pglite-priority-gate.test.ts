/** The embedded database's turn-taking (db/pglite-priority.ts): one at a time, agents before the dashboard, the dashboard never starved. */
import { describe, expect, it } from "vitest";
import { DASHBOARD_TURN_AFTER, PriorityGate, pglitePriorityFromEnv } from "@/db/pglite-priority";
import type { QueryPriority } from "@/db/query-priority";

async function turnsUntil(ready: () => boolean) {
  for (let turn = 0; turn < 1000 && !ready(); turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(ready()).toBe(true);
}

function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("PriorityGate", () => {
  it("lets one operation in at a time and hands the turn to waiting agents before waiting dashboard reads", async () => {
    const gate = new PriorityGate();
    const order: string[] = [];
    let inside = 0;
    let mostInside = 0;
    const op = (priority: QueryPriority, name: string, wait?: Promise<void>) =>
      gate.run(priority, async () => {
        mostInside = Math.max(mostInside, ++inside);
        await wait;
        await Promise.resolve();
        order.push(name);
        inside--;
      });
    const holding = latch();
    const ongoing = op("dashboard", "ongoing read", holding.opened);
    await turnsUntil(() => inside === 1);
    const all = [ongoing, op("dashboard", "read 1"), op("dashboard", "read 2"), op("agent", "check 1"), op("agent", "check 2")];
    expect(gate.queued).toEqual({ agent: 2, dashboard: 2 });
    holding.open();
    await Promise.all(all);
    expect(order).toEqual(["ongoing read", "check 1", "check 2", "read 1", "read 2"]);
    expect(mostInside).toBe(1);
  });

  it("gives a waiting dashboard read a turn after a run of agent operations", async () => {
    const gate = new PriorityGate();
    const order: string[] = [];
    const holding = latch();
    const first = gate.run("agent", () => holding.opened);
    const read = gate.run("dashboard", async () => void order.push("read"));
    const checks = Array.from({ length: DASHBOARD_TURN_AFTER + 4 }, (_, i) => gate.run("agent", async () => void order.push(`check ${i}`)));
    holding.open();
    await Promise.all([first, read, ...checks]);
    expect(order.indexOf("read")).toBe(DASHBOARD_TURN_AFTER);
    expect(order).toHaveLength(DASHBOARD_TURN_AFTER + 5);
  });

  it("lets the event loop turn before a dashboard read starts: an agent that asks meanwhile goes first", async () => {
    const gate = new PriorityGate();
    const order: string[] = [];
    const read = gate.run("dashboard", async () => void order.push("read"));
    // Asked a loop turn later, as a request read from its socket would.
    await new Promise((resolve) => setImmediate(resolve));
    const check = gate.run("agent", async () => void order.push("check"));
    await Promise.all([read, check]);
    expect(order).toEqual(["check", "read"]);
  });

  it("gives the turn on when an operation fails", async () => {
    const gate = new PriorityGate();
    await expect(gate.run("dashboard", async () => Promise.reject(new Error("statement failed")))).rejects.toThrow("statement failed");
    await expect(gate.run("agent", async () => "answered")).resolves.toBe("answered");
    expect(gate.queued).toEqual({ agent: 0, dashboard: 0 });
  });
});

describe("VIGIL_PGLITE_PRIORITY", () => {
  it("is on unless set to off, and names itself when it is neither", () => {
    expect(pglitePriorityFromEnv(undefined)).toBe(true);
    expect(pglitePriorityFromEnv("on")).toBe(true);
    expect(pglitePriorityFromEnv("off")).toBe(false);
    expect(() => pglitePriorityFromEnv("no")).toThrow(/VIGIL_PGLITE_PRIORITY must be "on" or "off", got "no"/);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { useTestApp } from "../support/use-test-app";
import { appRouter } from "@/server/trpc/root";
import type { ProcedureMeta } from "@/server/trpc/init";

/**
 * "Nothing ever answers 500 for client input": arbitrary JSON, and near-valid events with one
 * field replaced by arbitrary JSON, sent to every agent procedure — always a 2xx or 4xx.
 * The agent procedures are read from the router: those whose declared access is an API key.
 */
const routed = (appRouter._def as unknown as { procedures: Record<string, { _def: { type: "query" | "mutation" | "subscription"; meta?: ProcedureMeta } }> }).procedures;
const agentProcedures = Object.keys(routed).filter((path) => routed[path]._def.meta?.access.kind === "key");
const queries = agentProcedures.filter((path) => routed[path]._def.type === "query");
const mutations = agentProcedures.filter((path) => routed[path]._def.type === "mutation");

describe("client input never causes a 500", () => {
  let key: string;
  const app = useTestApp("pglite");
  beforeAll(async () => {
    key = (await app.seedWorkspace()).key;
  });

  it("reads the agent procedures from the router", () => {
    expect(mutations).toEqual(expect.arrayContaining(["ingest.events", "guard.check", "config.put", "keys.reset"]));
    expect(queries).toEqual(expect.arrayContaining(["reliability.status", "sessions.get", "config.get"]));
  });

  it("arbitrary JSON bodies", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...mutations, ...queries), fc.jsonValue(), async (path, input) => {
        const res = queries.includes(path) ? await app.query(path, input, { key }) : await app.mutation(path, input, { key });
        expect(res.status, `${path} ${JSON.stringify(input).slice(0, 200)}`).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });

  it("events with one field replaced by arbitrary JSON", async () => {
    const base = {
      type: "tool.result",
      id: "x",
      sessionId: "s",
      callId: "c",
      toolName: "bash",
      args: { command: "ls" },
      success: false,
      error: "boom",
      httpStatus: 500,
      ts: Date.now(),
    };
    const fields = [...Object.keys(base), "result", "severity", "domain", "service", "durationMs", "turnIndex", "model", "pluginName"];
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), fc.jsonValue(), async (field, value) => {
        const ev = { ...base, id: `fuzz-${n++}`, [field]: value };
        const res = await app.mutation("ingest.events", { events: [ev] }, { key });
        expect(res.status, `${field}=${JSON.stringify(value).slice(0, 200)}`).toBeLessThan(500);
        const guard = await app.mutation("guard.check", { id: `g-${n}`, sessionId: "s", callId: "c", toolName: "bash", args: { command: "ls" }, [field]: value }, { key });
        expect(guard.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });
});

/**
 * Agents first on the embedded database (db/pglite-priority.ts): a guard.check that arrives while a
 * dashboard read holds PGlite and another waits is answered before the waiting read, and the
 * Models page's window read a day per statement answers what one statement answers. Orderings and
 * answers only: nothing here depends on how long a statement takes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { call as event, result, uid } from "../support/agent";
import { clientOf, type Db } from "@/db/client";
import { pglitePriorityGate, type PriorityGate } from "@/db/pglite-priority";
import { modelMatrix } from "@/server/dashboard/patterns-data";

const DAY = 86_400_000;

/** guard.check's input: a tool call as an agent is about to make it. */
function call(sessionId: string, toolName: string, args: Record<string, unknown>) {
  const { type: _type, ...input } = event(sessionId, toolName, args);
  return input;
}

/** Event-loop turns until `ready()`; fails rather than waits for ever. */
async function turnsUntil(ready: () => boolean) {
  for (let turn = 0; turn < 10_000; turn++) {
    if (ready()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("never became ready");
}

describe.runIf(DATABASE_KINDS.includes("pglite"))("agents first on PGlite", () => {
  const app = useTestApp("pglite");
  let seeded: Awaited<ReturnType<typeof app.seedWorkspace>>;
  let agent: Awaited<ReturnType<typeof app.seedWorkspace>>;
  let gate: PriorityGate;
  const window = { from: new Date(Date.now() - 30 * DAY) };

  beforeAll(async () => {
    seeded = await app.seedWorkspace();
    agent = await app.seedWorkspace();
    gate = pglitePriorityGate(clientOf(app.db))!;
    // Ten days of results on three models, some failing: a Models matrix of several days and partial edges.
    const events = [];
    for (let d = 1; d <= 10; d++) {
      for (const [m, model] of ["gpt-a", "claude-b", "gemini-c"].entries()) {
        for (let i = 0; i < 4; i++) {
          const failed = (d + m + i) % 3 === 0;
          events.push(
            result(uid("s"), i % 2 ? "fetch" : "search", { q: `q${i}` }, failed ? { success: false, error: "timeout", httpStatus: 504 } : { success: true }, {
              model,
              ts: new Date(Date.now() - d * DAY + (m * 4 + i) * 60_000).toISOString(),
            }),
          );
        }
      }
    }
    await ingestAccepted(app, seeded.key, events);
  });

  it("has a gate in front of the embedded database", () => {
    expect(gate).toBeDefined();
  });

  it("answers a guard.check that arrives while a dashboard read holds the database before the dashboard read queued ahead of it", async () => {
    // The statements warmed by another workspace's check; this workspace's key is read from the database.
    const warm = await app.seedWorkspace();
    await app.mutation("guard.check", call(uid("s"), "read_file", { path: "/warm" }), { key: warm.key });
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A dashboard read under way (a transaction holds its turn until it ends) …
    let holding = false;
    const ongoing = app.db
      .transaction(async (tx) => {
        await tx.execute(sql`select count(*) from generate_series(1, 1000)`);
        holding = true;
        await held;
      })
      .then(() => order.push("ongoing dashboard read"));
    await turnsUntil(() => holding);
    // … the Models page's 30 days queued behind it, and a long single statement of the dashboard's …
    const models = modelMatrix(app.db, seeded.workspaceId, 12, window).then(() => order.push("Models 30d"));
    const long = app.db.execute(sql`select count(*) from generate_series(1, 300000)`).then(() => order.push("long dashboard statement"));
    await turnsUntil(() => gate.queued.dashboard >= 2);
    // … then an agent checks a call.
    const check = app.mutation("guard.check", call(uid("s"), "read_file", { path: "/p" }), { key: agent.key }).then((res) => {
      order.push("guard.check");
      return res;
    });
    try {
      await turnsUntil(() => gate.queued.agent >= 1);
    } finally {
      release();
    }
    const [answer] = await Promise.all([check, ongoing, models, long]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.result?.data.decision).toBe("allow");
    expect(order[0]).toBe("ongoing dashboard read");
    expect(order[1]).toBe("guard.check");
    expect(order.slice(2).sort()).toEqual(["Models 30d", "long dashboard statement"]);
  });

  it("answers the Models window a day per statement as one statement does, while agents check meanwhile", async () => {
    // Inside a transaction the client has no gate: the window is read in one statement.
    const inOneStatement = await app.db.transaction((tx) => modelMatrix(tx as unknown as Db, seeded.workspaceId, 12, window));
    const checks = Array.from({ length: 6 }, (_, i) => app.mutation("guard.check", call(uid("s"), "read_file", { path: `/f${i}` }), { key: agent.key }));
    const inTurns = await modelMatrix(app.db, seeded.workspaceId, 12, window);
    await Promise.all(checks);
    expect(inOneStatement.keys.length).toBeGreaterThan(0);
    expect(inOneStatement.models.sort()).toEqual(["claude-b", "gemini-c", "gpt-a"]);
    expect(inTurns).toEqual(inOneStatement);
    // A window with partial days at both edges, too.
    const edges = { from: new Date(Date.now() - 7.5 * DAY), to: new Date(Date.now() - 2.25 * DAY) };
    const edgesInOne = await app.db.transaction((tx) => modelMatrix(tx as unknown as Db, seeded.workspaceId, 12, edges));
    expect(await modelMatrix(app.db, seeded.workspaceId, 12, edges)).toEqual(edgesInOne);
    // Fewer keys shown than there are: the same top keys, ranked alike.
    const topThree = await app.db.transaction((tx) => modelMatrix(tx as unknown as Db, seeded.workspaceId, 3, window));
    expect(topThree.keys).toHaveLength(3);
    expect(await modelMatrix(app.db, seeded.workspaceId, 3, window)).toEqual(topThree);
  });
});

describe.runIf(DATABASE_KINDS.includes("postgres"))("PostgreSQL takes no turns", () => {
  const app = useTestApp("postgres");
  it("has no gate in front of its pool", () => {
    expect(pglitePriorityGate(clientOf(app.db))).toBeUndefined();
  });
});

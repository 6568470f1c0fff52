/**
 * A PostgreSQL server that is not there fails fast and is recognised as "unavailable" (→ 503 +
 * Retry-After), while ordinary SQL errors stay errors (→ 500). A real cluster stopped under the
 * handlers with requests in flight: every request answered within 2 s, 503 + Retry-After whatever
 * its kind (agent, dashboard session, sign-in, health), and prompt answers once it is back. The
 * same against the built app is in scripts/hardening/crash-trials.ts.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { migrateDatabase, openDatabase } from "@/db/client";
import { handleHealth } from "@/server/agent-api/health";
import { handleAuthRequest } from "@/server/auth-route";
import { startPgCluster, type PgCluster } from "../support/pg-cluster";
import { TestApp } from "../support/app";
import { call, uid } from "../support/agent";
import { isDatabaseUnavailable } from "@/server/http/database-unavailable";
import { createTestDatabase } from "../support/databases";

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

describe("database unavailable", () => {
  it("a query against a server that is down fails within 2 s and counts as unavailable", async () => {
    const database = await openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres` });
    const t0 = Date.now();
    const err = await database.db.execute(sql`select 1`).then(() => null, (e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err).toBeTruthy();
    expect(isDatabaseUnavailable(err)).toBe(true);
    await database.close();
  });

  it("an SQL error on a live server is not an outage", async () => {
    const database = await createTestDatabase("postgres");
    const err = await database.db.execute(sql`select * from no_such_table`).then(() => null, (e: unknown) => e);
    expect(err).toBeTruthy();
    expect(isDatabaseUnavailable(err)).toBe(false);
    await database.close();
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fast shutdown without blocking this thread (the handlers under test run in it): SIGINT to the postmaster. */
async function stopServer(cluster: PgCluster): Promise<void> {
  const pid = cluster.serverPid();
  process.kill(pid, "SIGINT");
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(25);
  }
  throw new Error("PostgreSQL did not stop within 5 s");
}

interface Answer {
  kind: string;
  status: number;
  retryAfter: string | null;
  ms: number;
}

describe("PostgreSQL stopped with requests in flight", () => {
  it("answers every request within 2 s (503 + Retry-After, never 401 or a hang) and serves promptly once it is back", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    const cluster = await startPgCluster();
    const database = await openDatabase({ url: cluster.url, poolSize: 10 });
    try {
      await migrateDatabase(database);
      const app = await TestApp.create(database);
      const email = `outage-${uid()}@example.com`;
      const { cookie, userId } = await app.signUp(email);
      const { key, slug } = await app.seedWorkspace({ ownerUserId: userId });
      const signIn = () =>
        handleAuthRequest(
          new Request("http://localhost/api/auth/sign-in/email", {
            method: "POST",
            headers: { "content-type": "application/json", origin: "http://localhost" },
            body: JSON.stringify({ email, password: "correct-horse-battery" }),
          }),
          async () => app.runtime,
        );
      // Each kind of request: agent writes and reads, the dashboard's session path, sign-in, health.
      const kinds: Record<string, () => Promise<{ status: number; headers: Headers }>> = {
        ingest: () => app.mutation("ingest.events", { events: Array.from({ length: 40 }, () => call("s-outage", "bash", { command: "ls" })) }, { key }),
        guard: () => app.mutation("guard.check", { id: uid("g"), sessionId: "s-outage", callId: uid("c"), toolName: "bash", args: { command: "ls" } }, { key }),
        status: () => app.query("reliability.status", {}, { key }),
        dashboardQuery: () => app.query("account.me", undefined, { cookie }),
        dashboardWorkspace: () => app.query("ws.overview.live", { workspaceSlug: slug }, { cookie }),
        signIn,
        health: () => handleHealth(async () => app.runtime),
      };
      for (const [kind, send] of Object.entries(kinds)) {
        expect((await send()).status, `${kind} before the outage`).toBe(200);
      }

      const answers: Answer[] = [];
      let running = true;
      const loop = async (kind: string) => {
        while (running) {
          const t0 = performance.now();
          const res = await kinds[kind]();
          answers.push({ kind, status: res.status, retryAfter: res.headers.get("retry-after"), ms: performance.now() - t0 });
          if (res.status !== 200) await sleep(20);
        }
      };
      const loops = Object.keys(kinds).flatMap((kind) => [loop(kind), loop(kind)]);
      await sleep(300);
      const stoppedAt = answers.length;
      await stopServer(cluster);
      await sleep(3_000);
      running = false;
      await loops;

      const during = answers.slice(stoppedAt);
      const slow = during.filter((a) => a.ms > 2_000);
      expect(slow, "answers slower than 2 s").toEqual([]);
      const refused = during.filter((a) => a.status !== 200);
      expect(refused.length).toBeGreaterThan(20);
      const wrong = refused.filter((a) => a.status !== 503 || a.retryAfter === null);
      expect(wrong, "anything but 503 + Retry-After (a 401 for the session path, an empty 500 for sign-in)").toEqual([]);
      for (const kind of Object.keys(kinds)) expect(refused.some((a) => a.kind === kind), `${kind} refused during the outage`).toBe(true);

      // Back: each kind answers promptly, none waits on a reconnect back-off or a lost write.
      cluster.resume();
      const back = performance.now();
      for (const [kind, send] of Object.entries(kinds)) {
        let res = await send();
        while (res.status !== 200 && performance.now() - back < 2_000) res = await send();
        expect(res.status, `${kind} after the restart`).toBe(200);
      }
      expect(performance.now() - back).toBeLessThan(4_000);
      await sleep(200);
      expect(uncaught, "uncaught exceptions from the database client").toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
      await database.close().catch(() => {});
      // A server left stopped by a failed assertion: the data directory is removed all the same.
      if (fs.existsSync(path.join(cluster.socketDir, "data", "postmaster.pid"))) cluster.stop();
      else fs.rmSync(cluster.socketDir, { recursive: true, force: true });
    }
  });
});

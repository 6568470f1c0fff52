/**
 * clients/python/vigil_client.py against a real Vigil: the agent API behind a real HTTP server, the
 * client's pytest suite run by Debian's python3 with VIGIL_URL / VIGIL_API_KEY, then what it
 * reported read back from the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { and, eq, like } from "drizzle-orm";
import { useTestApp } from "../support/use-test-app";
import { ROOT, serveAgentApi } from "../support/packed-sdk";
import { agentSession, event } from "@/db/schema";

const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

describe("the Python client (clients/python)", () => {
  const app = useTestApp("pglite");
  let api: Awaited<ReturnType<typeof serveAgentApi>>;
  beforeAll(async () => {
    api = await serveAgentApi(app.runtime);
  });
  afterAll(async () => api?.close());

  it("passes its pytest suite against Vigil; results, failures and sessions land in Vigil", async () => {
    const ws = await app.seedWorkspace();
    const prefix = `py-${Date.now()}`;
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", VIGIL_URL: api.url, VIGIL_API_KEY: ws.key, VIGIL_TEST_SESSION_PREFIX: prefix, PYTHONDONTWRITEBYTECODE: "1" };
    const outcome = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "clients/python/tests"], { cwd: ROOT, env: env as unknown as NodeJS.ProcessEnv, timeout: 120_000 }, (error: Error | null, stdout: string, stderr: string) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
    });
    expect(outcome.code, outcome.output).toBe(0);
    expect(outcome.output).toMatch(/3 passed/);

    const rowsOf = (sessionId: string) => app.db.select().from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, sessionId))).orderBy(event.ts, event.seq);
    const results = (await rowsOf(`${prefix}-escalate`)).filter((r) => r.type === "tool.result");
    expect(results.map((r) => [r.failed, (r.payload as { error?: string }).error, (r.payload as { httpStatus?: number }).httpStatus])).toEqual(Array(3).fill([true, "Service Unavailable", 503]));
    const granted = await rowsOf(`${prefix}-escalate-second`);
    expect(granted.filter((r) => r.type === "tool.result").map((r) => r.failed)).toEqual([false]);
    expect(granted.find((r) => r.type === "permission.resolved")?.payload).toMatchObject({ granted: true, method: "python" });
    const sessions = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), like(agentSession.sessionId, `${prefix}-%`)));
    expect(sessions.map((s) => s.agent)).toContain("py-agent");
  }, 150_000);
});

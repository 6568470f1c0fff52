/**
 * Many instances (issue 13 part 3): two production app instances on one PostgreSQL cluster, 8
 * concurrent writers spread over both, all on the same failure keys and shared sessions, with
 * `recovery_mode: "ask"`. Checks: no 5xx (no deadlock), exact totals per key and per session, and
 * exactly one pending recovery approval per key (no duplicate from a cross-instance race).
 * Prints the figures; exits non-zero when one misses.
 *
 * Usage: npx tsx scripts/hardening/many-instances.ts   (after `next build`; ports 3215 and 3216)
 */
import { spawn, type ChildProcess } from "node:child_process";
import postgres from "postgres";
import { serverArgs } from "../server-command.mjs";
import { startPgCluster } from "../../tests/support/pg-cluster";

const PORTS = [Number(process.env.MANY_INSTANCES_PORT ?? 3215), Number(process.env.MANY_INSTANCES_PORT ?? 3215) + 1];
const KEY = "vgl_many_instances_key_0123456789abcdef";
const WRITERS = 8;
const BATCHES = 6;
const PER_KEY = 3; // results per key per batch
const KEYS = ["alpha", "beta", "gamma"];
const SESSIONS = ["shared-1", "shared-2"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startApp(port: number, url: string, log: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, serverArgs(port, "127.0.0.1"), {
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: url,
      VIGIL_RATE_LIMIT_PER_MINUTE: "1000000",
      VIGIL_INIT_ORG: "Many Org",
      VIGIL_INIT_WORKSPACE: "many",
      VIGIL_INIT_API_KEY: KEY,
      VIGIL_INIT_USER_EMAIL: "owner@many.test",
      VIGIL_INIT_USER_PASSWORD: "owner-password-123",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => log.push(String(d)));
  child.stderr!.on("data", (d) => log.push(String(d)));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`app on ${port} exited during start-up:\n${log.join("")}`);
    const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null);
    if (res?.ok) return child;
    await sleep(100);
  }
  throw new Error(`app on ${port} did not become healthy:\n${log.join("")}`);
}

async function call(port: number, procedure: string, input: unknown, method: "GET" | "POST" = "POST") {
  const url = `http://127.0.0.1:${port}/api/trpc/${procedure}` + (method === "GET" ? `?input=${encodeURIComponent(JSON.stringify(input))}` : "");
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: method === "POST" ? JSON.stringify(input) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function main() {
  const cluster = await startPgCluster();
  const apps: ChildProcess[] = [];
  const logs: string[][] = [[], []];
  const failures: string[] = [];
  try {
    // One at a time: both run the migrations and the VIGIL_INIT_* set-up on the same database.
    for (let i = 0; i < 2; i++) apps.push(await startApp(PORTS[i], cluster.url, logs[i]));
    const put = await call(PORTS[0], "config.put", {
      default_rule: { count_threshold: 2, escalation_duration_seconds: 0, cooldown_seconds: 0, success_count_to_recover: 2 },
      settings: { recovery_mode: "ask" },
    });
    if (put.status !== 200) throw new Error(`config.put: ${put.status} ${JSON.stringify(put.body)}`);

    const statuses = new Map<number, number>();
    const expectedPerKey = new Map<string, { calls: number; failures: number }>();
    const expectedPerSession = new Map<string, number>();
    let expectedEvents = 0;
    let accepted = 0;
    let seq = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const port = PORTS[w % 2];
        for (let b = 0; b < BATCHES; b++) {
          const events: unknown[] = [];
          // Odd writers go through the keys in the opposite order; early batches fail, later succeed.
          const keys = w % 2 === 0 ? KEYS : [...KEYS].reverse();
          for (const k of keys) {
            for (let i = 0; i < PER_KEY; i++) {
              const sessionId = SESSIONS[(w + i) % SESSIONS.length];
              const failed = b < 2;
              events.push({
                type: "tool.result",
                id: `w${w}-b${b}-${k}-${i}-${seq++}`,
                sessionId,
                callId: `c-w${w}-b${b}-${k}-${i}`,
                toolName: "http_request",
                args: { url: `https://${k}.example.com/v1/items` },
                ...(failed ? { success: false, httpStatus: 503 } : { success: true }),
              });
              const fk = `http_request|domain=${k}.example.com|path_prefix=v1`;
              const e = expectedPerKey.get(fk) ?? { calls: 0, failures: 0 };
              e.calls++;
              if (failed) e.failures++;
              expectedPerKey.set(fk, e);
              expectedPerSession.set(sessionId, (expectedPerSession.get(sessionId) ?? 0) + 1);
            }
          }
          expectedEvents += events.length;
          const r = await call(port, "ingest.events", { events });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status === 200) accepted += r.body.result.data.accepted;
          else console.log(`[many-instances] writer ${w} batch ${b} on :${port}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        }
      }),
    );
    const fiveXX = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);

    const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
    let wrongKeys = 0;
    let wrongSessions = 0;
    let storedEvents = 0;
    const pendingPerKey = new Map<string, number>();
    try {
      for (const [fk, e] of expectedPerKey) {
        const [row] = await sql<{ total_calls: number; total_failures: number }[]>`select total_calls, total_failures from key_state where failure_key = ${fk}`;
        const ok = row && row.total_calls === e.calls && row.total_failures === e.failures;
        if (!ok) wrongKeys++;
        console.log(`[many-instances] ${fk}: calls ${row?.total_calls}/${e.calls}, failures ${row?.total_failures}/${e.failures}${ok ? "" : "  ← WRONG"}`);
      }
      for (const [sid, n] of expectedPerSession) {
        const [row] = await sql<{ event_count: number }[]>`select event_count from agent_session where session_id = ${sid}`;
        if (row?.event_count !== n) wrongSessions++;
        console.log(`[many-instances] session ${sid}: events ${row?.event_count}/${n}`);
      }
      storedEvents = Number((await sql<{ n: string }[]>`select count(*)::text as n from event`)[0].n);
      for (const r of await sql<{ failure_key: string; n: number }[]>`select failure_key, count(*)::int as n from approval where kind = 'recovery' and status = 'pending' group by failure_key`)
        pendingPerKey.set(r.failure_key, r.n);
    } finally {
      await sql.end({ timeout: 5 });
    }
    const pendingWrong = [...expectedPerKey.keys()].filter((fk) => pendingPerKey.get(fk) !== 1);

    console.log(
      `[many-instances] 2 instances, ${WRITERS} writers, ${WRITERS * BATCHES} batches: statuses ${JSON.stringify(Object.fromEntries(statuses))}, ` +
        `${fiveXX} 5xx; events ${accepted} accepted / ${storedEvents} stored / ${expectedEvents} sent; ` +
        `${wrongKeys} keys and ${wrongSessions} sessions with wrong totals; pending recovery approvals per key ${JSON.stringify(Object.fromEntries(pendingPerKey))}`,
    );
    // A tool call held on one instance is released by a decision taken on the other.
    const delta = "https://delta.example.com/v1/items";
    const deltaKey = "http_request|domain=delta.example.com|path_prefix=v1";
    await call(PORTS[0], "config.put", { default_rule: { count_threshold: 2, escalation_duration_seconds: 600 }, settings: { recovery_mode: "ask" } });
    const fails = [0, 1].map((i) => ({ type: "tool.result", id: `delta-${i}`, sessionId: "delta", callId: `delta-c${i}`, toolName: "http_request", args: { url: delta }, success: false, httpStatus: 503 }));
    if ((await call(PORTS[0], "ingest.events", { events: fails })).status !== 200) failures.push("delta failures not accepted");
    const held = call(PORTS[0], "guard.check", { id: "delta-g", sessionId: "delta", callId: "delta-held", toolName: "http_request", args: { url: delta }, waitForApprovalSeconds: 30 });
    let approvalId: string | undefined;
    for (let i = 0; i < 100 && !approvalId; i++) {
      await sleep(100);
      const list = await call(PORTS[1], "approvals.list", { status: "pending" }, "GET");
      approvalId = list.body.result?.data.approvals.find((a: any) => a.kind === "tool_call" && a.failureKey === deltaKey)?.id;
    }
    let releasedMs = -1;
    let heldDecision = "none";
    if (!approvalId) failures.push("no tool-call approval appeared for the held guard.check");
    else {
      const t0 = Date.now();
      const resolved = await call(PORTS[1], "approvals.resolve", { approvalId, decision: "approve" });
      if (resolved.status !== 200) failures.push(`approvals.resolve on the other instance: ${resolved.status}`);
      const answer = await held;
      releasedMs = Date.now() - t0;
      heldDecision = answer.body.result?.data.decision ?? `status ${answer.status}`;
      if (heldDecision !== "allow" || releasedMs > 5_000) failures.push(`held guard.check answered ${heldDecision} after ${releasedMs} ms`);
    }
    console.log(`[many-instances] tool call held on :${PORTS[0]}, approved on :${PORTS[1]} → ${heldDecision} after ${releasedMs} ms`);

    if (fiveXX) failures.push(`${fiveXX} 5xx answers`);
    if (statuses.get(200) !== WRITERS * BATCHES) failures.push("not every batch answered 200");
    if (accepted !== expectedEvents || storedEvents !== expectedEvents) failures.push(`events: ${accepted} accepted, ${storedEvents} stored, ${expectedEvents} sent`);
    if (wrongKeys || wrongSessions) failures.push(`${wrongKeys} keys and ${wrongSessions} sessions with wrong totals`);
    if (pendingWrong.length) failures.push(`keys without exactly one pending approval: ${pendingWrong.join(", ")}`);
  } finally {
    for (const a of apps) a.kill("SIGKILL");
    await sleep(200);
    cluster.stop();
  }
  if (failures.length) {
    console.error(`[many-instances] FAILED:\n  ${failures.join("\n  ")}`);
    process.exit(1);
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

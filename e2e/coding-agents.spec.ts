/**
 * The real Claude Code CLI (2.1.197) and Codex CLI (0.169.0), installed in e2e/agents, connected to
 * a running Vigil by their hooks only (the Connect page's configuration), their models scripted
 * mocks on localhost: what the model reads and what the CLI does is the CLI's own behaviour with
 * Vigil's answers (SPEC 7.5).
 */
import { expect, request as playwrightRequestFactory, test } from "@playwright/test";
import { MockAnthropic, lastToolResults, requestText, type Script } from "./agents/mock-anthropic";
import { MockOpenAI, functionOutputs, responsesText } from "./agents/mock-openai";
import { runClaude } from "./agents/claude";
import { runCodex } from "./agents/codex";
import { freshWorkspace, query, signIn, trpc } from "./support";

const ALL_SEVERITIES = ["transient", "not_found", "invalid_input", "permission", "validation", "timeout", "server_error", "crash", "corruption", "security", "repeated_auth"];

test.describe.configure({ mode: "serial" });

let mock: MockAnthropic;
let ws: { slug: string; key: string };
let vigilUrl: string;
const playwrightRequest = () => playwrightRequestFactory.newContext({ baseURL: vigilUrl });

test.beforeAll(async ({ browser, baseURL }) => {
  vigilUrl = baseURL!;
  const page = await browser.newPage();
  await signIn(page);
  ws = await freshWorkspace(page, "agents");
  await page.close();
  mock = new MockAnthropic(() => ({ text: "done" }));
  await mock.start();
});

test.afterAll(async () => {
  await mock?.stop();
});

/** The model retries one failing command until `until` holds for its latest request. */
function retryScript(command: string, until: (text: string) => boolean = () => false): Script {
  return (req) => (until(requestText(req)) ? { text: "Stopping: Vigil says the retries do not help." } : { toolUse: { name: "Bash", input: { command, description: "List the build output" } } });
}

test("a repeated failing Bash command: Vigil's nudge reaches the model's next request", async ({ browser, request }) => {
  // Stall detection revision 2: the third identical call after identical failures is a loop; the
  // nudge rides on that call's PreToolUse answer and reaches the model with the call's result.
  // The calls failed, so it says to read the error (SPEC 5.1).
  const nudge = "failed 2 times with the same error. Read the error";
  mock.setScript(retryScript("ls missing-build-dir", (text) => text.includes(nudge)));
  const run = await runClaude({ prompt: "build the project", modelUrl: mock.url, vigilUrl, apiKey: ws.key });
  expect(run.exitCode, run.stderr).toBe(0);

  expect(mock.agentRequests).toHaveLength(4);
  const before = requestText(mock.agentRequests[2]);
  const after = requestText(mock.agentRequests[3]);
  expect(before).not.toContain(nudge);
  expect(after).toMatch(/<system-reminder>[\s\S]*hook additional context:[\s\S]*Bash[\s\S]*failed 2 times with the same error\. Read the error/);
  expect(run.result?.result).toContain("Stopping");

  // Vigil recorded the session under the CLI's session id, agent "claude-code".
  const session = await query(request, "sessions.get", { sessionId: run.result!.session_id }, ws.key);
  expect(session.body.result.data).toMatchObject({ agent: "claude-code", paused: false });

  // The model's last text, carried by Claude Code's Stop hook, is on the session's timeline (SPEC 5.1).
  const page = await browser.newPage();
  try {
    await signIn(page);
    await page.goto(`/w/${ws.slug}/sessions/${encodeURIComponent(run.result!.session_id)}`);
    await expect(page.locator('.timeline-item[data-kind="text"]').filter({ hasText: "Stopping: Vigil says the retries do not help." })).toBeVisible();
  } finally {
    await page.close();
  }
});

test("a session Vigil pauses stops the agent at once, before any further model call", async ({ request }) => {
  mock.setScript(retryScript("ls missing-release-dir"));
  const run = await runClaude({ prompt: "ship the release", modelUrl: mock.url, vigilUrl, apiKey: ws.key, agent: "release-bot" });

  // The fifth identical call is severe: Vigil pauses the session and holds the call back; the
  // PostToolBatch that follows stops Claude Code before any further model call.
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.result?.terminal_reason).toBe("hook_stopped");
  expect(mock.agentRequests).toHaveLength(5);
  const sessionId = run.result?.session_id ?? "";
  const session = await query(request, "sessions.get", { sessionId }, ws.key);
  expect(session.body.result.data).toMatchObject({ agent: "release-bot", paused: true });
});

test("an escalated tool is held back with Vigil's reason, which the model reads", async ({ request }) => {
  expect((await trpc(request, "config.put", { tool_rules: { Bash: { consecutive_threshold: 2, severity_filter: ALL_SEVERITIES } } }, ws.key)).status).toBe(200);
  try {
    let turn = 0;
    mock.setScript((req) => {
      turn += 1;
      if (turn <= 3) return { toolUse: { name: "Bash", input: { command: "cat missing-config.yaml", description: "Read the config" } } };
      return { text: "The tool is escalated; waiting for a person." };
    });
    const run = await runClaude({ prompt: "read the config", modelUrl: mock.url, vigilUrl, apiKey: ws.key });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(mock.agentRequests).toHaveLength(4);
    // Calls 1 and 2 ran and failed; call 3 was held back by Vigil ("ask", which headless Claude
    // Code treats as a denial): the model reads Vigil's reason as the tool's error.
    const [third] = lastToolResults(mock.agentRequests[3]);
    expect(third.isError).toBe(true);
    expect(third.content).toMatch(/Vigil: .*2 consecutive failures/);
    const status = await query(request, "reliability.status", { toolName: "Bash" }, ws.key);
    expect(status.body.result.data.keys.some((k: { state: string }) => k.state === "escalated")).toBe(true);
  } finally {
    await trpc(request, "config.put", {}, ws.key);
    await trpc(request, "keys.reset", { all: true }, ws.key);
  }
});

test("a held-back call waits for a person; approved on the Approvals page, it runs and the model reads its output", async ({ browser, request }) => {
  expect((await trpc(request, "config.put", { tool_rules: { Bash: { consecutive_threshold: 2, severity_filter: ALL_SEVERITIES } } }, ws.key)).status).toBe(200);
  const page = await browser.newPage();
  try {
    await signIn(page);
    await page.goto(`/w/${ws.slug}/approvals`);
    await expect(page.getByRole("heading", { name: /Waiting tool calls/ })).toBeVisible();
    let turn = 0;
    mock.setScript(() => {
      turn += 1;
      // Two failing `cat` calls escalate Bash|command=cat; the third `cat` is held back for a person.
      if (turn <= 2) return { toolUse: { name: "Bash", input: { command: "cat missing-config.yaml", description: "Read the config" } } };
      if (turn === 3) return { toolUse: { name: "Bash", input: { command: "cat README.md", description: "Read the readme" } } };
      return { text: "Read the readme." };
    });
    const running = runClaude({ prompt: "read the config", modelUrl: mock.url, vigilUrl, apiKey: ws.key, waitSeconds: 60 });

    // The waiting call appears live on the Approvals page; a person approves it from the keyboard.
    const card = page.getByRole("article", { name: "Tool call Bash waiting for approval" });
    await expect(card).toBeVisible({ timeout: 60_000 });
    await expect(card).toContainText("claude-code");
    await expect(card).toContainText("README.md");
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("a");
    await expect(card).toHaveCount(0);

    const run = await running;
    expect(run.exitCode, run.stderr).toBe(0);
    expect(mock.agentRequests).toHaveLength(4);
    // The approved call ran: the model's next request carries the file's content, not an error.
    const [approved] = lastToolResults(mock.agentRequests[3]);
    expect(approved.isError).toBe(false);
    expect(approved.content).toContain("# scratch project");
  } finally {
    await page.close();
    await trpc(request, "config.put", {}, ws.key);
    await trpc(request, "keys.reset", { all: true }, ws.key);
  }
});

test.describe("Codex CLI", () => {
  let openai: MockOpenAI;

  test.beforeAll(async () => {
    openai = new MockOpenAI(() => ({ text: "done" }));
    await openai.start();
  });
  test.afterAll(async () => {
    await openai?.stop();
    await trpc(await playwrightRequest(), "config.put", {}, ws.key);
  });

  test("a call Vigil holds back is denied with Vigil's reason, which the model reads (Codex ignores ask)", async ({ request }) => {
    // Another agent of the workspace already failed this command twice: the key is escalated.
    expect((await trpc(request, "config.put", { tool_rules: { Bash: { consecutive_threshold: 2, severity_filter: ALL_SEVERITIES } } }, ws.key)).status).toBe(200);
    const failed = (n: number) => ({ type: "tool.result", id: `codex-seed-${n}`, sessionId: "codex-seed", callId: `seed-${n}`, toolName: "Bash", args: { command: "cat missing-secrets.yaml" }, success: false, error: "cat: missing-secrets.yaml: No such file or directory" });
    expect((await trpc(request, "ingest.events", { events: [failed(1), failed(2)] }, ws.key)).status).toBe(200);

    openai.setScript((_req, turn) => (turn === 1 ? { command: "cat missing-secrets.yaml" } : { text: "Held back by Vigil." }));
    const run = await runCodex({ prompt: "read the secrets file", modelUrl: openai.url, vigilUrl, apiKey: ws.key });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(openai.requests).toHaveLength(2);
    const [output] = functionOutputs(openai.requests[1]);
    expect(output).toContain("Command blocked by PreToolUse hook");
    expect(output).toMatch(/Vigil: .*2 consecutive failures/);
    await trpc(request, "keys.reset", { all: true }, ws.key);
  });

  test("a repeated call: Vigil's nudge reaches the model as a developer message", async ({ request }) => {
    // Codex reports no exit status, so its shell results all look successful; with Bash not counted
    // as an "action" tool, repeating it forms a loop Vigil nudges (SPEC 5, workspace tool classes).
    expect((await trpc(request, "config.put", { patterns: { action_tools: ["Write", "Edit"] } }, ws.key)).status).toBe(200);
    const nudge = /You've called Bash .{0,200}3 times with the same result/;
    openai.setScript((req) => (nudge.test(responsesText(req)) ? { text: "Changing approach." } : { command: "ls build" }));
    const run = await runCodex({ prompt: "check the build", modelUrl: openai.url, vigilUrl, apiKey: ws.key, agent: "codex-e2e" });
    expect(run.exitCode, run.stderr).toBe(0);
    // The nudge arrives once the loop formed (three calls or more), and the model then changes course.
    const first = openai.requests.findIndex((r) => nudge.test(responsesText(r)));
    expect(first).toBeGreaterThanOrEqual(3);
    expect(openai.requests).toHaveLength(first + 1);
    const developer = openai.requests[first].input.filter((i) => i.role === "developer").map((i) => JSON.stringify(i.content));
    expect(developer.join("\n")).toMatch(nudge);
  });
});

test("the Connect page hands out this workspace's configuration and shows the first event arrive", async ({ page, request }) => {
  await signIn(page);
  await page.goto(`/w/${ws.slug}/connect`);
  await expect(page.getByRole("heading", { name: "Connect an agent" })).toBeVisible();
  await page.getByText("Or paste the hooks by hand").first().click();
  await expect(page.getByLabel("~/.claude/settings.json (or .claude/settings.json in the project)", { exact: true })).toContainText(`${vigilUrl}/api/hooks/claude-code`);
  await page.getByLabel("Agent name").fill("nightly");
  await expect(page.getByLabel("~/.claude/settings.json (or .claude/settings.json in the project)", { exact: true })).toContainText("/api/hooks/claude-code?agent=nightly");
  await page.getByRole("tab", { name: "Codex CLI" }).click();
  await expect(page.getByRole("tabpanel")).toContainText("/api/hooks/codex?agent=nightly");

  // An agent's hook arrives: the live check shows it without a reload.
  const sessionId = `connect-check-${Date.now()}`;
  const res = await request.post("/api/hooks/claude-code?agent=nightly", {
    headers: { authorization: `Bearer ${ws.key}` },
    data: { session_id: sessionId, hook_event_name: "UserPromptSubmit", prompt: "hello", prompt_id: "p1" },
  });
  expect(res.status()).toBe(200);
  await page.getByRole("tab", { name: "Claude Code" }).click();
  await expect(page.getByTestId("cli-check-claude-code")).toContainText(sessionId, { timeout: 15_000 });
  await expect(page.getByTestId("cli-check-claude-code")).toContainText("nightly");
});

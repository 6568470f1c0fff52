import { expect, test, type APIRequestContext } from "@playwright/test";

/**
 * A viewer sees the data but no approve / deny / reset controls, and a direct tRPC call to a
 * member-level procedure is refused with 403. The owner sees the controls.
 */
const password = "correct-horse-battery";

async function post(req: APIRequestContext, path: string, data: unknown, headers: Record<string, string> = {}) {
  const res = await req.post(path, { data, headers: { "content-type": "application/json", ...headers } });
  const body = await res.json().catch(() => ({}));
  return { status: res.status(), body };
}

test("a viewer sees no approve or reset buttons and the server refuses them", async ({ browser, baseURL }) => {
  test.setTimeout(120_000);
  const id = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
  const slug = `viewer-${id}`;
  const ownerEmail = `owner-${id}@example.com`;
  const viewerEmail = `viewer-${id}@example.com`;
  const origin = { origin: baseURL! };

  // Owner: account, organization + workspace, admin key.
  const owner = await browser.newContext();
  expect((await post(owner.request, "/api/auth/sign-up/email", { email: ownerEmail, password, name: "Owner" }, origin)).status).toBe(200);
  const org = await post(owner.request, "/api/trpc/account.createOrganization", { name: `Viewer Org ${id}`, workspaceSlug: slug });
  expect(org.status).toBe(200);
  const organizationId = org.body.result.data.organizationId as string;
  const key = await post(owner.request, "/api/trpc/apiKeys.create", { workspaceSlug: slug, name: "seed", scope: "admin" });
  const apiKey = key.body.result.data.value as string;
  const agent = { authorization: `Bearer ${apiKey}` };

  // Ask-mode recovery so a pending approval exists; an escalated key to reset.
  expect((await post(owner.request, "/api/trpc/config.put", { settings: { recovery_mode: "ask" } }, agent)).status).toBe(200);
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  const events: unknown[] = [{ type: "session.start", id: "s", sessionId: "run-1", agent: "e2e", ts: at(200) }];
  const call = (n: number, minutesAgo: number, toolName: string, args: Record<string, unknown>, ok: boolean) => {
    events.push({ type: "tool.call", id: `c${n}`, sessionId: "run-1", callId: `k${n}`, toolName, args, ts: at(minutesAgo) });
    events.push({ type: "tool.result", id: `r${n}`, sessionId: "run-1", callId: `k${n}`, toolName, ts: at(minutesAgo), success: ok, ...(ok ? {} : { error: "HTTP 500 upstream failure", httpStatus: 500 }) });
  };
  [190, 189, 188].forEach((m, i) => call(i, m, "readFile", { path: "/var/log/syslog" }, false));
  [60, 59, 58].forEach((m, i) => call(10 + i, m, "readFile", { path: "/var/log/syslog" }, true));
  [5, 4, 3].forEach((m, i) => call(20 + i, m, "http_request", { url: "https://api.example.com/v1/items" }, false));
  const ingest = await post(owner.request, "/api/trpc/ingest.events", { events }, agent);
  expect(ingest.status).toBe(200);
  const pending = await owner.request.get(`/api/trpc/approvals.list?input=${encodeURIComponent(JSON.stringify({ status: "pending" }))}`, { headers: agent });
  const approvals = (await pending.json()).result.data.approvals as { id: string; failureKey: string }[];
  expect(approvals.length).toBeGreaterThan(0);

  // Viewer: signs up, then accepts the owner's invitation with the viewer role.
  const viewer = await browser.newContext();
  expect((await post(viewer.request, "/api/auth/sign-up/email", { email: viewerEmail, password, name: "Viewer" }, origin)).status).toBe(200);
  const invitation = await post(owner.request, "/api/trpc/invitations.create", { organizationId, role: "viewer" });
  expect(invitation.status).toBe(200);
  expect((await post(viewer.request, "/api/trpc/invitations.accept", { token: invitation.body.result.data.token })).status).toBe(200);

  const vp = await viewer.newPage();
  await vp.goto(`/w/${slug}/approvals`);
  await expect(vp.getByRole("article").first()).toBeVisible();
  await expect(vp.getByText("readFile", { exact: false }).first()).toBeVisible();
  await expect(vp.getByRole("button", { name: "Approve" })).toHaveCount(0);
  await expect(vp.getByRole("button", { name: "Deny" })).toHaveCount(0);

  await vp.goto(`/w/${slug}/tools`);
  await expect(vp.getByRole("table", { name: "Failure keys" })).toBeVisible();
  await expect(vp.getByRole("button", { name: /Reset all/ })).toHaveCount(0);

  await vp.goto(`/w/${slug}/tools/${encodeURIComponent("http_request|domain=api.example.com|path_prefix=v1")}`);
  await expect(vp.getByRole("heading", { level: 1 })).toContainText("http_request");
  // A key's controls show to a viewer, disabled, saying why (the server refuses them too).
  await expect(vp.getByRole("button", { name: "Reset" })).toBeDisabled();
  await expect(vp.getByRole("button", { name: /Block/ })).toBeDisabled();
  await expect(vp.getByTitle("Needs the member role or higher").first()).toBeVisible();

  // Direct tRPC calls with the viewer's session are refused.
  const reset = await post(viewer.request, "/api/trpc/ws.keys.reset", { workspaceSlug: slug, all: true });
  expect(reset.status).toBe(403);
  const resolve = await post(viewer.request, "/api/trpc/ws.approvals.resolve", { workspaceSlug: slug, approvalId: approvals[0].id, decision: "approve" });
  expect(resolve.status).toBe(403);
  // …but reading is allowed.
  const live = await viewer.request.get(`/api/trpc/ws.overview.live?input=${encodeURIComponent(JSON.stringify({ workspaceSlug: slug }))}`);
  expect(live.status()).toBe(200);

  // The owner sees the controls.
  const op = await owner.newPage();
  await op.goto(`/w/${slug}/approvals`);
  await expect(op.getByRole("button", { name: "Approve" }).first()).toBeVisible();
  await op.goto(`/w/${slug}/tools`);
  await expect(op.getByRole("button", { name: /Reset all/ })).toBeVisible();

  await owner.close();
  await viewer.close();
});

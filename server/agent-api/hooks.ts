/**
 * `POST /api/hooks/{claude-code,codex,gemini}` (SPEC 7.5), independent of Next.js so tests drive it
 * with plain Request objects. Checks in order: API key (401), rate limit (429 + Retry-After), body
 * size (413); then the payload is mapped by its CLI's adapter, recorded or checked, and answered in
 * the CLI's hook-output JSON. Whatever goes wrong after that is answered with an empty 200: the
 * CLIs fail open on errors anyway, and a 5xx would only hide that Vigil did not understand.
 */
import type { Runtime } from "@/server/runtime";
import { authenticateApiKey, authenticateApiKeyCached, forgetCachedApiKey } from "@/server/services/api-keys";
import { ApiKeyRevokedError } from "@/server/ingest/api-key-revoked";
import { consumeRateLimit } from "@/server/trpc/rate-limit";
import { bearerToken } from "@/server/trpc/init";
import { readLimitedBody } from "@/server/http/limited-body";
import { InputHygieneError, inputProblem } from "@/server/http/input-hygiene";
import { OVERLOAD_MESSAGE, withCapacity, type CapacitySlot } from "@/server/http/capacity";
import { answerClaudeCode, planClaudeShapedHook, type HookAnswer } from "./claude-code";
import { answerCodex, planCodexHook } from "./codex";
import { answerGemini, planGeminiHook } from "./gemini";
import { isObject, parseWaitSeconds, runPlan, type CliName, type HookPlan, type HookRequestContext, type HookVerdict, type Payload } from "./shared";

interface CliAdapter {
  plan: (p: Payload, ctx: HookRequestContext) => HookPlan;
  answer: (hook: string, v: HookVerdict) => HookAnswer;
}

const ADAPTERS: Record<CliName, CliAdapter> = {
  "claude-code": { plan: planClaudeShapedHook, answer: answerClaudeCode },
  codex: { plan: planCodexHook, answer: answerCodex },
  gemini: { plan: planGeminiHook, answer: answerGemini },
};

export const HOOK_CLIS = Object.keys(ADAPTERS) as CliName[];

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** The empty answer: "no objection" for every CLI. */
function empty(): Response {
  return new Response(null, { status: 200 });
}

/** The dashboard's origin as the agent reached it (VIGIL_BASE_URL wins), for links in answers. */
function publicOrigin(req: Request): string {
  if (process.env.VIGIL_BASE_URL) return process.env.VIGIL_BASE_URL.replace(/\/+$/, "");
  const url = new URL(req.url);
  const host = req.headers.get("x-forwarded-host")?.split(",")[0].trim() || req.headers.get("host") || url.host;
  const proto = req.headers.get("x-forwarded-proto")?.split(",")[0].trim() || url.protocol.replace(/:$/, "");
  return `${proto}://${host}`;
}

const REVOKED_MESSAGE = "Invalid or revoked API key";

export function handleHookRequest(req: Request, runtime: Runtime, cli: CliName): Promise<Response> {
  // The CLIs fail open on errors: an overloaded instance says so at once rather than timing out.
  return withCapacity(
    (slot) => serveHookRequest(req, runtime, cli, slot),
    (retryAfter) => json(503, { error: OVERLOAD_MESSAGE }, { "retry-after": String(retryAfter) }),
  );
}

async function serveHookRequest(req: Request, runtime: Runtime, cli: CliName, capacitySlot: CapacitySlot): Promise<Response> {
  if (req.method !== "POST") return json(405, { error: "Use POST" }, { allow: "POST" });
  const db = runtime.database.db;
  const token = bearerToken(req);
  if (!token) return json(401, { error: "Missing API key: send Authorization: Bearer <key>" });
  // From memory when possible: the key is then checked again before anything is written or shown
  // (see HookRequestContext.cachedKey) — in guard.check's read or a batch's first round trip.
  const found = await authenticateApiKeyCached(db, token);
  if (!found) return json(401, { error: REVOKED_MESSAGE });
  const { key } = found;
  let stillActive: Promise<void> | undefined;
  const cachedKey = found.cached
    ? {
        apiKeyId: key.keyId,
        ensureActive: () =>
          (stillActive ??= authenticateApiKey(db, token).then((fresh) => {
            if (fresh?.keyId !== key.keyId) throw new ApiKeyRevokedError();
          })),
      }
    : undefined;
  const limited = await consumeRateLimit(key.keyId);
  if (limited) {
    return json(429, { error: `Rate limit exceeded; retry in ${limited.retryAfterSeconds}s` }, { "retry-after": String(limited.retryAfterSeconds) });
  }
  const raw = await readLimitedBody(req);
  if (raw === "too_large") return json(413, { error: "Request body exceeds 1 MiB" });

  const receivedAt = Date.now();
  try {
    let payload: unknown;
    try {
      payload = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      return empty();
    }
    if (!isObject(payload)) return empty();
    const issue = inputProblem(payload);
    if (issue) return json(400, { error: new InputHygieneError(issue).message, issues: [issue] });
    const url = new URL(req.url);
    const origin = publicOrigin(req);
    const ctx: HookRequestContext = {
      cli,
      agent: (url.searchParams.get("agent")?.trim() || cli).slice(0, 200),
      waitSeconds: parseWaitSeconds(url.searchParams.get("wait")),
      scope: { workspaceId: key.workspaceId, organizationId: key.organizationId },
      sessionUrl: (sessionId) => `${origin}/w/${key.workspaceSlug}/sessions/${encodeURIComponent(sessionId)}`,
      // A CLI that gives up (its hook time-out) stops the wait for a person.
      signal: req.signal,
      capacitySlot,
      cachedKey,
    };
    const adapter = ADAPTERS[cli];
    const verdict = await runPlan(db, ctx, adapter.plan(payload, ctx), receivedAt);
    const answer = adapter.answer(typeof payload.hook_event_name === "string" ? payload.hook_event_name : "", verdict);
    return answer ? json(200, answer) : empty();
  } catch (err) {
    if (err instanceof ApiKeyRevokedError) {
      forgetCachedApiKey(db, key.keyId);
      return json(401, { error: REVOKED_MESSAGE });
    }
    console.error(`[vigil] ${cli} hook could not be applied:`, err);
    return empty();
  }
}

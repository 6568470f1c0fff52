/**
 * `POST /api/hooks/{claude-code,codex,gemini}` (SPEC 7.5), independent of Next.js so tests drive it
 * with plain Request objects. The agent-request steps first (./agent-request.ts: capacity, API key,
 * rate limit, body size); then the payload is mapped by its CLI's adapter, recorded or checked, and answered in
 * the CLI's hook-output JSON. Whatever goes wrong after that is answered with an empty 200: the
 * CLIs fail open on errors anyway, and a 5xx would only hide that Vigil did not understand.
 */
import type { Runtime } from "@/server/runtime";
import { authenticateApiKey, forgetCachedApiKey } from "@/server/services/api-keys";
import { bearerToken } from "@/server/services/agent-key";
import { ApiKeyRevokedError } from "@/server/ingest/api-key-revoked";
import { InputHygieneError, inputProblem } from "@/server/http/input-hygiene";
import { handleAgentRequest, type AgentRequestContext } from "./agent-request";
import { answerClaudeCode, planClaudeShapedHook, type HookAnswer } from "@/server/hooks/claude-code";
import { answerCodex, planCodexHook } from "@/server/hooks/codex";
import { answerGemini, planGeminiHook } from "@/server/hooks/gemini";
import { isObject, parseWaitSeconds, runPlan, type CliName, type HookPlan, type HookRequestContext, type HookVerdict, type Payload } from "@/server/hooks/shared";
import { publicOrigin } from "@/server/http/public-origin";

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

const REVOKED_MESSAGE = "Invalid or revoked API key";

export function handleHookRequest(req: Request, runtime: Runtime, cli: CliName): Promise<Response> {
  return handleAgentRequest(req, runtime, {
    // The CLIs fail open on errors: an overloaded instance says so at once rather than timing out.
    refuse: (r) => {
      // A key that cannot be read while the database is down is not answered here (the route's own error answer).
      if (r.reason === "database_unavailable") throw r.cause;
      return json(r.status, { error: r.message }, r.headers);
    },
    // From memory when possible: the key is then checked again before anything is written or shown
    // (see HookRequestContext.cachedKey) — in guard.check's read or a batch's first round trip.
    key: "cached",
    methods: ["POST"],
    parse: (raw) => raw!,
    run: (raw, _req, ctx) => runHook(req, ctx, cli, raw),
  });
}

async function runHook(req: Request, { db, key: authenticated, keyFromCache, slot }: AgentRequestContext, cli: CliName, raw: Uint8Array): Promise<Response> {
  const key = authenticated!;
  let stillActive: Promise<void> | undefined;
  const token = bearerToken(req)!;
  const cachedKey = keyFromCache
    ? {
        apiKeyId: key.keyId,
        ensureActive: () =>
          (stillActive ??= authenticateApiKey(db, token).then((fresh) => {
            if (fresh?.keyId !== key.keyId) throw new ApiKeyRevokedError();
          })),
      }
    : undefined;
  const receivedAt = Date.now();
  try {
    let payload: unknown;
    try {
      payload = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      return empty();
    }
    if (!isObject(payload)) return empty();
    const issue = inputProblem(payload, { strings: false });
    if (issue) return json(400, { error: new InputHygieneError(issue).message, issues: [issue] });
    const url = new URL(req.url);
    const origin = publicOrigin(req);
    const ctx: HookRequestContext = {
      cli,
      agent: (url.searchParams.get("agent")?.trim() || cli).slice(0, 200),
      waitSeconds: parseWaitSeconds(url.searchParams.get("wait")),
      scope: { workspaceId: key.workspaceId, organizationId: key.organizationId },
      sessionUrl: (sessionId) => `${origin}/w/${key.workspaceSlug}/sessions/${encodeURIComponent(sessionId)}`,
      keyUrl: (failureKey) => `${origin}/w/${key.workspaceSlug}/tools/${encodeURIComponent(failureKey)}`,
      // A CLI that gives up (its hook time-out) stops the wait for a person.
      signal: req.signal,
      capacitySlot: slot!,
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

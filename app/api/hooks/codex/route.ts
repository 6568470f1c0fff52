import { getRuntime } from "@/server/runtime";
import { handleHookRequest } from "@/server/agent-api/hooks";

export const dynamic = "force-dynamic";

/** codex hooks (SPEC 7.5): the hook's JSON body as the CLI sends it; answers in its hook-output JSON. */
export async function POST(req: Request) {
  return handleHookRequest(req, await getRuntime(), "codex");
}

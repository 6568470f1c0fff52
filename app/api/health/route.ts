import { getRuntime } from "@/server/runtime";
import { handleHealth } from "@/server/agent-api/health";

export const dynamic = "force-dynamic";

export function GET() {
  return handleHealth(getRuntime);
}

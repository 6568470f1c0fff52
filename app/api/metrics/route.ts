import { getRuntime } from "@/server/runtime";
import { handleMetrics } from "@/server/agent-api/metrics";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return handleMetrics(req, getRuntime);
}

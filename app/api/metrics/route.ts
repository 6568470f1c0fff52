import { getRuntime } from "@/server/runtime";
import { handleMetrics } from "@/server/metrics/handler";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return handleMetrics(req, getRuntime);
}

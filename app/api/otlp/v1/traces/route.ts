import { getRuntime } from "@/server/runtime";
import { handleOtlpTraces } from "@/server/agent-api/otlp";

export const dynamic = "force-dynamic";

/** OTLP/HTTP trace export (SPEC 7.4): OTEL_EXPORTER_OTLP_ENDPOINT=http://<host>/api/otlp */
export async function POST(req: Request) {
  return handleOtlpTraces(req, await getRuntime());
}

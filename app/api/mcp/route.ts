import { getRuntime } from "@/server/runtime";
import { handleMcpRequest } from "@/server/agent-api/mcp";

export const dynamic = "force-dynamic";

/** Vigil's tools for the model over MCP Streamable HTTP, stateless (SPEC 7.7). */
export async function POST(req: Request) {
  return handleMcpRequest(req, await getRuntime());
}

/** Stateless: no stream to open, no session to end; answered by the handler's 405. */
export async function GET(req: Request) {
  return handleMcpRequest(req, await getRuntime());
}

export async function DELETE(req: Request) {
  return handleMcpRequest(req, await getRuntime());
}

import { getRuntime } from "@/server/runtime";
import { handleTrpcRequest } from "@/server/agent-api/trpc";

export const dynamic = "force-dynamic";

async function handler(req: Request) {
  return handleTrpcRequest(req, await getRuntime());
}

export { handler as GET, handler as POST };

import { getRuntime } from "@/server/runtime";
import { handleAuthRequest } from "@/server/auth-route";

export const dynamic = "force-dynamic";

function handler(req: Request) {
  return handleAuthRequest(req, getRuntime);
}

export { handler as GET, handler as POST };

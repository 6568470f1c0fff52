import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";

async function handler(req: Request) {
  const { auth } = await getRuntime();
  return auth.handler(req);
}

export { handler as GET, handler as POST };

import { getRuntime } from "@/server/runtime";
import { handleExport } from "@/server/dashboard/export";

export const dynamic = "force-dynamic";

export async function GET(req: Request, { params }: { params: Promise<{ resource: string }> }) {
  return handleExport(req, await getRuntime(), (await params).resource);
}

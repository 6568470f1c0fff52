/** Server half of LiveRefresh: reads the counts the page is rendered with. */
import { getRuntime } from "@/server/runtime";
import { getLiveCounts } from "@/server/dashboard/overview";
import { LiveRefresh } from "./live-refresh";

export async function LivePageRefresh({ slug, workspaceId }: { slug: string; workspaceId: string }) {
  const { database } = await getRuntime();
  return <LiveRefresh slug={slug} initial={await getLiveCounts(database.db, workspaceId)} />;
}

import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { ConnectPanel } from "@/components/dashboard/connect-panel";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { getBaseUrl } from "@/server/dashboard/base-url";
import { getCliLastEvents, getLastEvent } from "@/server/dashboard/connect";
import { getRuntime } from "@/server/runtime";

export const metadata: Metadata = { title: "Connect an agent" };
export const dynamic = "force-dynamic";

/** Connect an agent (SPEC 7.5): a key made here, one command per coding CLI, and a check per CLI that its first event arrived. */
export default async function ConnectPage({ params }: { params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const db = (await getRuntime()).database.db;
  const [baseUrl, lastEvent, cliEvents] = await Promise.all([getBaseUrl(), getLastEvent(db, page.access.workspace.id), getCliLastEvents(db, page.access.workspace.id)]);
  return (
    <>
      <PageHeader
        title="Connect an agent"
        description={`Coding agents report to ${page.access.workspace.name} through their own hooks, with no code on their side; other agents use OpenTelemetry or plain HTTP. Create a key, run one command, start the agent, and watch its first event arrive here.`}
      />
      <ConnectPanel slug={page.access.workspace.slug} baseUrl={baseUrl} canConfigure={page.permissions.canConfigure} initialLastEvent={lastEvent} initialCliEvents={cliEvents} />
    </>
  );
}

import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { CursorPager } from "@/components/cursor-pager";
import { AuditFilters, AuditTable } from "@/components/dashboard/audit-table";
import { withSearchParams } from "@/components/data-table";
import { PageHeader } from "@/components/page-header";
import { requireOrgPage } from "@/server/dashboard/access";
import { readOrgAudit } from "@/server/dashboard/org-audit";
import { stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Organization audit log" };

const PATH = "/org/audit";

export default async function OrgAuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const page = await requireOrgPage();
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const action = stringParam(sp.action);
  const actor = stringParam(sp.actor);
  const scope = stringParam(sp.scope) === "all" ? "all" : "org";
  const list = await readOrgAudit(db, page.user.id, page.organization.id, {
    action,
    actorType: actor,
    scope,
    after: stringParam(sp.after),
    before: stringParam(sp.before),
    pageSize: 50,
  });
  if (!list) notFound();

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Audit log"
        description={`What people and keys did to ${page.organization.name}: invitations, members and roles, workspaces, organization defaults and policies.`}
      />
      <AuditFilters path={PATH} actions={list.actions} action={action} actor={actor} scope={scope} clearHref={PATH} />
      <AuditTable
        label="Organization audit log"
        rows={list.rows}
        now={now}
        showWorkspace={scope === "all"}
        filtered={!!(action || actor || scope === "all")}
        emptyTitle="No organization actions recorded yet"
        emptyDescription="Invitations, member and role changes, new workspaces, organization defaults and policies appear here."
      />
      {list.total > 0 && (
        <CursorPager
          total={list.total}
          noun={list.total === 1 ? "entry" : "entries"}
          newerHref={list.prevCursor ? withSearchParams(PATH, sp, { after: null, before: list.prevCursor }) : null}
          olderHref={list.nextCursor ? withSearchParams(PATH, sp, { before: null, after: list.nextCursor }) : null}
        />
      )}
    </div>
  );
}

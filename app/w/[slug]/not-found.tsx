import Link from "next/link";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";

/** A 404 inside a workspace: rendered inside the workspace layout, so the navigation stays. */
export default function WorkspaceNotFound() {
  return (
    <>
      <PageHeader title="Not found" />
      <EmptyState
        bordered
        icon="search"
        title="Nothing here"
        description="This page, failure key or session does not exist in this workspace. Old data may have been removed by retention."
        actions={
          <Link className="btn btn-secondary btn-sm" href="/">
            Go to your dashboard
          </Link>
        }
      />
    </>
  );
}

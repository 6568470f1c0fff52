import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

export default function NotFound() {
  return (
    <main className="center-page">
      <EmptyState
        icon="search"
        title="Not found"
        description="This page does not exist, or it belongs to an organization you are not a member of."
        actions={
          <Link className="btn btn-secondary btn-sm" href="/">
            Go to your dashboard
          </Link>
        }
      />
    </main>
  );
}

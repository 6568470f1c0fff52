import { ActionMenu } from "@/components/action-menu";
import { exportHref, type ExportResource } from "@/server/dashboard/export";
import type { SearchParams } from "@/server/dashboard/util";

/** "Export" on a list page: the rows its filters and range select, as CSV or JSON (streamed by /api/export). */
export function ExportMenu({ resource, slug, searchParams }: { resource: ExportResource; slug: string; searchParams: SearchParams }) {
  return (
    <ActionMenu
      label="Export"
      items={[
        { label: "CSV (spreadsheets)", href: exportHref(resource, slug, "csv", searchParams), download: true },
        { label: "JSON", href: exportHref(resource, slug, "json", searchParams), download: true },
      ]}
    />
  );
}

import type { ReactNode } from "react";
import { notFound } from "next/navigation";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { decodeParam, sessionExists } from "@/server/dashboard/exists";
import { getRuntime } from "@/server/runtime";

/** Outside the page's loading boundary: an unknown session answers 404 before anything streams. */
export default async function SessionLayout({ children, params }: { children: ReactNode; params: Promise<{ slug: string; sessionId: string }> }) {
  const { slug, sessionId } = await params;
  const page = await requireWorkspacePage(slug);
  if (!(await sessionExists((await getRuntime()).database.db, page.access.workspace.id, decodeParam(sessionId)))) notFound();
  return children;
}

import type { ReactNode } from "react";
import { notFound } from "next/navigation";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { decodeParam, failureKeyExists } from "@/server/dashboard/exists";
import { getRuntime } from "@/server/runtime";

/** Outside the page's loading boundary: an unknown key answers 404 before anything streams. */
export default async function KeyLayout({ children, params }: { children: ReactNode; params: Promise<{ slug: string; key: string }> }) {
  const { slug, key } = await params;
  const failureKey = decodeParam(key);
  if (!failureKey || failureKey.length > 2048) notFound();
  const page = await requireWorkspacePage(slug);
  if (!(await failureKeyExists((await getRuntime()).database.db, page.access.workspace.id, failureKey))) notFound();
  return children;
}

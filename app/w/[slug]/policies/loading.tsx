import { PageLoading } from "@/components/loading";

/** Shown while the page queries run, so a slow click never leaves the old page up. */
export default function Loading() {
  return <PageLoading rows={8} />;
}

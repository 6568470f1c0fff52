import { PageLoading } from "@/components/loading";

export default function Loading() {
  return <PageLoading stats rows={8} />;
}

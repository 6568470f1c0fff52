import { PageLoading } from "@/components/loading";

export default function Loading() {
  return <PageLoading rows={10} />;
}

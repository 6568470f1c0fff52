"use client";

import { RouteError } from "@/components/dashboard/route-error";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <RouteError error={error} reset={reset} what="the organization's audit log" />;
}

"use client";

import { RouteError } from "@/components/dashboard/route-error";

/** The boundary for pages and layouts without their own (a database outage shows here too). */
export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="center-page">
      <RouteError error={error} reset={reset} what="this page" />
    </main>
  );
}

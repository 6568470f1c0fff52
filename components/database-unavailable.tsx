"use client";

import { ErrorState } from "@/components/error-state";

/** What a page shows while the database cannot be reached (never the sign-in page: the session is unknown, not gone). */
export function DatabaseUnavailable({ onRetry }: { onRetry: () => void }) {
  return (
    <ErrorState
      bordered
      title="Database unavailable"
      description="Vigil cannot reach its database right now. Nothing you saved is lost; try again in a few seconds."
      onRetry={onRetry}
    />
  );
}

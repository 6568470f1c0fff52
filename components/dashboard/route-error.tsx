"use client";

import { useEffect } from "react";
import { ErrorState } from "@/components/error-state";
import { DatabaseUnavailable } from "@/components/database-unavailable";
import { DATABASE_UNAVAILABLE_DIGEST } from "@/lib/database-unavailable";

/** Body of the dashboard's `error.tsx` files. */
export function RouteError({ error, reset, what = "this page" }: { error: Error & { digest?: string }; reset: () => void; what?: string }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  if (error.digest === DATABASE_UNAVAILABLE_DIGEST) return <DatabaseUnavailable onRetry={reset} />;
  return (
    <ErrorState
      bordered
      title={`Could not load ${what}`}
      description="The server could not answer. Try again; if it keeps failing, check the server log."
      detail={error.digest ? `Error reference: ${error.digest}` : undefined}
      onRetry={reset}
    />
  );
}

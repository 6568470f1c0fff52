import type { ReactNode } from "react";
import { Icon } from "./icons";

/**
 * Error message block. In an `error.tsx` route file (a client component) pass `onRetry={reset}`;
 * from a Server Component pass `actions` (e.g. a link) instead.
 */
export function ErrorState({
  title = "Something went wrong",
  description = "The data could not be loaded. Try again in a moment.",
  detail,
  onRetry,
  actions,
  bordered = false,
}: {
  title?: ReactNode;
  description?: ReactNode;
  /** Technical detail such as an error digest, shown small and monospaced. */
  detail?: string;
  onRetry?: () => void;
  actions?: ReactNode;
  bordered?: boolean;
}) {
  return (
    <div className="empty error-state" role="alert" data-bordered={bordered || undefined}>
      <div className="empty-icon">
        <Icon name="alertCircle" />
      </div>
      <div className="empty-title">{title}</div>
      {description && <div className="empty-text">{description}</div>}
      {detail && <div className="error-detail">{detail}</div>}
      {(onRetry || actions) && (
        <div className="empty-actions">
          {onRetry && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={onRetry}>
              <Icon name="refresh" />
              Try again
            </button>
          )}
          {actions}
        </div>
      )}
    </div>
  );
}

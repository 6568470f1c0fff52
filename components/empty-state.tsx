import type { ReactNode } from "react";
import { Icon, type IconName } from "./icons";

/** Centered "nothing here" message with optional icon and actions. */
export function EmptyState({
  title,
  description,
  icon = "inbox",
  actions,
  compact = false,
  bordered = false,
}: {
  title: ReactNode;
  description?: ReactNode;
  icon?: IconName | null;
  actions?: ReactNode;
  compact?: boolean;
  /** Dashed outline, for use directly on the page background. */
  bordered?: boolean;
}) {
  return (
    <div className="empty" data-compact={compact || undefined} data-bordered={bordered || undefined}>
      {icon && (
        <div className="empty-icon">
          <Icon name={icon} />
        </div>
      )}
      <div className="empty-title">{title}</div>
      {description && <div className="empty-text">{description}</div>}
      {actions && <div className="empty-actions">{actions}</div>}
    </div>
  );
}

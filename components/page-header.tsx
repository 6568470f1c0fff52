import type { ReactNode } from "react";

/** Page title block at the top of `.content`: title (+ inline badges), description, right-aligned actions. */
export function PageHeader({
  title,
  description,
  actions,
  badge,
}: {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  /** Shown inline after the title (e.g. a StateBadge on a key detail page). */
  badge?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div className="page-header-text">
        <h1 className="page-title">
          {title}
          {badge}
        </h1>
        {description && <p className="page-description">{description}</p>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

/** Section inside a page: title, optional description and actions, then children. */
export function Section({
  title,
  description,
  actions,
  children,
  id,
}: {
  title?: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  id?: string;
}) {
  return (
    <section className="section" id={id} aria-labelledby={id && title ? `${id}-title` : undefined}>
      {(title || actions) && (
        <div className="section-head">
          <div className="section-head-text">
            {title && (
              <h2 className="section-title" id={id ? `${id}-title` : undefined}>
                {title}
              </h2>
            )}
            {description && <p className="section-description">{description}</p>}
          </div>
          {actions && <div className="row">{actions}</div>}
        </div>
      )}
      {children}
    </section>
  );
}

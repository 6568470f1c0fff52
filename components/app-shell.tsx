"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { MiddleTruncate } from "./middle-truncate";
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { Icon, type IconName } from "./icons";
import { RoleBadge } from "./state-badge";
import { Toaster } from "./toast";

export type AppShellProps = {
  org: { name: string };
  workspaces: { slug: string; name: string }[];
  currentWorkspace: string | null;
  user: { email: string; role: string };
  approvalsCount?: number;
  /** Right side of the top bar (global actions). Page actions belong in <PageHeader actions>. */
  topbarActions?: ReactNode;
  /** Workspaces of the user's other organizations, listed under their names in the switcher. */
  otherOrganizations?: { name: string; workspaces: { slug: string; name: string }[] }[];
  children: ReactNode;
};

type NavItem = { section: string; label: string; icon: IconName };

const WORKSPACE_NAV: NavItem[] = [
  { section: "overview", label: "Overview", icon: "overview" },
  { section: "tools", label: "Tools", icon: "tools" },
  { section: "failures", label: "Failures", icon: "failures" },
  { section: "sessions", label: "Sessions", icon: "sessions" },
  { section: "patterns", label: "Patterns", icon: "patterns" },
  { section: "models", label: "Models", icon: "models" },
  { section: "approvals", label: "Approvals", icon: "approvals" },
  { section: "policies", label: "Policies", icon: "shield" },
  { section: "settings", label: "Settings", icon: "settings" },
  { section: "audit", label: "Audit log", icon: "audit" },
  { section: "connect", label: "Connect an agent", icon: "plug" },
];

const ORG_NAV: NavItem[] = [
  { section: "workspaces", label: "Workspaces", icon: "workspaces" },
  { section: "members", label: "Members", icon: "members" },
  { section: "defaults", label: "Org defaults", icon: "defaults" },
  { section: "policies", label: "Policies", icon: "shield" },
  { section: "patterns", label: "Global patterns", icon: "globe" },
  { section: "audit", label: "Audit log", icon: "audit" },
];

const SECTION_LABEL: Record<string, string> = Object.fromEntries(WORKSPACE_NAV.map((n) => [n.section, n.label]));
const ORG_LABEL: Record<string, string> = Object.fromEntries(ORG_NAV.map((n) => [n.section, n.label]));

function isActive(pathname: string, href: string) {
  return pathname === href || pathname.startsWith(href + "/");
}

function safeDecode(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function useBreadcrumbs(pathname: string, props: AppShellProps) {
  const parts = pathname.split("/").filter(Boolean);
  const crumbs: { label: string; href?: string }[] = [];
  if (parts[0] === "w" && parts[1]) {
    const ws = props.workspaces.find((w) => w.slug === parts[1]);
    crumbs.push({ label: ws?.name ?? parts[1], href: `/w/${parts[1]}/overview` });
    if (parts[2]) crumbs.push({ label: SECTION_LABEL[parts[2]] ?? safeDecode(parts[2]), href: `/w/${parts[1]}/${parts[2]}` });
    for (let i = 3; i < parts.length; i++) crumbs.push({ label: safeDecode(parts[i]), href: "/" + parts.slice(0, i + 1).join("/") });
  } else if (parts[0] === "org") {
    crumbs.push({ label: props.org.name, href: "/org/workspaces" });
    if (parts[1]) crumbs.push({ label: ORG_LABEL[parts[1]] ?? safeDecode(parts[1]), href: `/org/${parts[1]}` });
    for (let i = 2; i < parts.length; i++) crumbs.push({ label: safeDecode(parts[i]), href: "/" + parts.slice(0, i + 1).join("/") });
  } else {
    crumbs.push({ label: props.org.name });
    for (let i = 0; i < parts.length; i++) crumbs.push({ label: safeDecode(parts[i]), href: "/" + parts.slice(0, i + 1).join("/") });
  }
  return crumbs;
}

export function AppShell(props: AppShellProps) {
  const { org, workspaces, currentWorkspace, user, approvalsCount, topbarActions, otherOrganizations, children } = props;
  const pathname = usePathname() ?? "/";
  const [navOpen, setNavOpen] = useState(false);
  const sidebarRef = useRef<HTMLElement>(null);
  const menuButtonRef = useRef<HTMLButtonElement>(null);

  // Close the drawer on navigation.
  useEffect(() => setNavOpen(false), [pathname]);

  useEffect(() => {
    if (!navOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        setNavOpen(false);
        menuButtonRef.current?.focus();
      }
    };
    document.addEventListener("keydown", onKey);
    sidebarRef.current?.querySelector<HTMLElement>("a, button")?.focus();
    const prev = document.body.style.overflow;
    document.body.style.overflow = "hidden";
    return () => {
      document.removeEventListener("keydown", onKey);
      document.body.style.overflow = prev;
    };
  }, [navOpen]);

  const crumbs = useBreadcrumbs(pathname, props);
  const ws = workspaces.find((w) => w.slug === currentWorkspace) ?? null;
  const currentSection = pathname.startsWith("/w/") ? pathname.split("/")[3] : undefined;

  return (
    <div className="shell" data-nav-open={navOpen ? "true" : undefined}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <aside className="sidebar" id="app-sidebar" ref={sidebarRef} aria-label="Sidebar">
        <div className="sidebar-head">
          <Link className="brand" href={ws ? `/w/${ws.slug}/overview` : "/org/workspaces"}>
            <span className="brand-mark" aria-hidden="true">
              <Icon name="shield" size={12} strokeWidth={2} />
            </span>
            Vigil
            <span className="brand-org">· {org.name}</span>
          </Link>
          <WorkspaceSwitcher workspaces={workspaces} current={ws} section={currentSection} orgName={org.name} others={otherOrganizations ?? []} />
        </div>
        <nav className="sidebar-scroll" aria-label="Main">
          {ws && (
            <div className="nav-section">
              <div className="nav-heading" id="nav-ws">
                Workspace
              </div>
              <ul className="nav-list" aria-labelledby="nav-ws">
                {WORKSPACE_NAV.map((item) => {
                  const href = `/w/${ws.slug}/${item.section}`;
                  const active = isActive(pathname, href);
                  const count = item.section === "approvals" && approvalsCount ? approvalsCount : 0;
                  return (
                    <li key={item.section}>
                      <Link className="nav-link" href={href} aria-current={active ? "page" : undefined}>
                        <Icon name={item.icon} />
                        {item.label}
                        {count > 0 && (
                          <span className="nav-count" aria-label={`${count} pending`}>
                            {count > 99 ? "99+" : count}
                          </span>
                        )}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            </div>
          )}
          <div className="nav-section">
            <div className="nav-heading" id="nav-org">
              Organization
            </div>
            <ul className="nav-list" aria-labelledby="nav-org">
              {ORG_NAV.map((item) => {
                const href = `/org/${item.section}`;
                const active = isActive(pathname, href);
                return (
                  <li key={item.section}>
                    <Link className="nav-link" href={href} aria-current={active ? "page" : undefined}>
                      <Icon name={item.icon} />
                      {item.label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
        </nav>
        <div className="sidebar-foot">
          <div className="user-chip">
            <span className="user-avatar" aria-hidden="true">
              {user.email.slice(0, 2)}
            </span>
            <span className="user-meta">
              <span className="user-email" title={user.email}>
                {user.email}
              </span>
              <span>
                <RoleBadge role={user.role} />
              </span>
            </span>
          </div>
          <SignOutButton />
        </div>
      </aside>
      <button type="button" className="drawer-backdrop" aria-label="Close menu" tabIndex={-1} onClick={() => setNavOpen(false)} />

      <div className="main">
        <header className="topbar">
          <button
            ref={menuButtonRef}
            type="button"
            className="btn btn-ghost btn-icon topbar-menu"
            aria-label={navOpen ? "Close menu" : "Open menu"}
            aria-expanded={navOpen}
            aria-controls="app-sidebar"
            onClick={() => setNavOpen((o) => !o)}
          >
            <Icon name="menu" />
          </button>
          <nav className="breadcrumbs" aria-label="Breadcrumb">
            <ol>
              {crumbs.map((c, i) => {
                const last = i === crumbs.length - 1;
                return (
                  <li key={i}>
                    {/* Ids (sessions, keys) differ at the end: elide the middle, never the tail. */}
                    {last || !c.href ? (
                      <span aria-current={last ? "page" : undefined} className="crumb">
                        <MiddleTruncate value={c.label} />
                      </span>
                    ) : (
                      <Link href={c.href} className="crumb">
                        <MiddleTruncate value={c.label} />
                      </Link>
                    )}
                  </li>
                );
              })}
            </ol>
          </nav>
          {topbarActions && <div className="topbar-actions">{topbarActions}</div>}
        </header>
        <main className="content" id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
      <Toaster />
    </div>
  );
}

function WorkspaceSwitcher({
  workspaces,
  current,
  section,
  orgName,
  others,
}: {
  workspaces: { slug: string; name: string }[];
  current: { slug: string; name: string } | null;
  section?: string;
  orgName: string;
  others: { name: string; workspaces: { slug: string; name: string }[] }[];
}) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const target = section && SECTION_LABEL[section] ? section : "overview";

  const close = useCallback((focusButton: boolean) => {
    setOpen(false);
    if (focusButton) button.current?.focus();
  }, []);

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) close(false);
    };
    document.addEventListener("mousedown", onDown);
    root.current?.querySelector<HTMLElement>('[aria-current="true"], .menu-item')?.focus();
    return () => document.removeEventListener("mousedown", onDown);
  }, [open, close]);

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (!open) return;
    if (e.key === "Escape") {
      e.stopPropagation();
      close(true);
      return;
    }
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const items = Array.from(root.current?.querySelectorAll<HTMLElement>(".menu-item") ?? []);
      const idx = items.indexOf(document.activeElement as HTMLElement);
      const next = e.key === "ArrowDown" ? (idx + 1) % items.length : (idx - 1 + items.length) % items.length;
      items[next]?.focus();
    }
  };

  return (
    <div className="ws-switcher" ref={root} onKeyDown={onKeyDown}>
      <button
        ref={button}
        type="button"
        className="ws-trigger"
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls="ws-menu"
        onClick={() => setOpen((o) => !o)}
      >
        <span className="ws-avatar" aria-hidden="true">
          {(current?.name ?? "?").slice(0, 1)}
        </span>
        <span className="ws-name">{current ? current.name : "Select workspace"}</span>
        <Icon name="chevronsUpDown" size={14} style={{ color: "var(--text-subtle)" }} />
      </button>
      {open && (
        <div className="menu ws-menu" id="ws-menu">
          <div className="menu-label">{others.length ? orgName : "Workspaces"}</div>
          <ul style={{ listStyle: "none", margin: 0, padding: 0 }}>
            {workspaces.map((w) => (
              <li key={w.slug}>
                <Link
                  className="menu-item"
                  href={`/w/${w.slug}/${target}`}
                  aria-current={w.slug === current?.slug ? "true" : undefined}
                  onClick={() => setOpen(false)}
                >
                  <span className="ws-avatar" aria-hidden="true">
                    {w.name.slice(0, 1)}
                  </span>
                  <span className="ws-name">{w.name}</span>
                  {w.slug === current?.slug && <Icon name="check" className="menu-check" />}
                </Link>
              </li>
            ))}
          </ul>
          {others.map((o) => (
            <div key={o.name}>
              <div className="divider" style={{ margin: "4px 0" }} />
              <div className="menu-label">{o.name}</div>
              <ul style={{ listStyle: "none", margin: 0, padding: 0 }}>
                {o.workspaces.map((w) => (
                  <li key={w.slug}>
                    <Link className="menu-item" href={`/w/${w.slug}/overview`} onClick={() => setOpen(false)}>
                      <span className="ws-avatar" aria-hidden="true">
                        {w.name.slice(0, 1)}
                      </span>
                      <span className="ws-name">{w.name}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          ))}
          <div className="divider" style={{ margin: "4px 0" }} />
          <Link className="menu-item" href="/org/workspaces" onClick={() => setOpen(false)}>
            <Icon name="workspaces" style={{ color: "var(--text-subtle)" }} />
            All workspaces
          </Link>
        </div>
      )}
    </div>
  );
}

function SignOutButton() {
  const [busy, setBusy] = useState(false);
  const signOut = async () => {
    setBusy(true);
    try {
      await fetch("/api/auth/sign-out", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
        credentials: "same-origin",
      });
    } catch {
      // fall through: navigate anyway; the sign-in page will show the real session state
    }
    // Full navigation so every client cache (React Query, router) is dropped.
    window.location.assign("/sign-in");
  };
  return (
    <button
      type="button"
      className="btn btn-ghost btn-sm btn-icon"
      onClick={signOut}
      disabled={busy}
      aria-busy={busy || undefined}
      aria-label="Sign out"
      title="Sign out"
    >
      {busy ? <span className="spinner" aria-hidden="true" /> : <Icon name="logout" />}
    </button>
  );
}

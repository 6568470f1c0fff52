import type { ReactNode } from "react";
import { humanize } from "./format";

export type TrustState = "trusted" | "escalated" | "recovering" | "blocked";
export type FailureSeverity =
  | "transient"
  | "not_found"
  | "invalid_input"
  | "permission"
  | "validation"
  | "timeout"
  | "server_error"
  | "crash"
  | "corruption"
  | "security"
  | "repeated_auth";
export type PatternSeverity = "minor" | "moderate" | "severe";
export type Role = "owner" | "admin" | "member" | "viewer";

export type BadgeTone =
  | "neutral"
  | "outline"
  | "success"
  | "info"
  | "warning"
  | "danger"
  | TrustState
  | PatternSeverity
  | Role;

/** Generic pill. `dot` adds a coloured status dot; `square` for roles/labels. */
export function Badge({
  tone = "neutral",
  dot = false,
  square = false,
  title,
  className,
  children,
}: {
  tone?: BadgeTone;
  dot?: boolean;
  square?: boolean;
  title?: string;
  className?: string;
  children: ReactNode;
}) {
  const cls = ["badge", dot && "badge-dot", square && "badge-square", className].filter(Boolean).join(" ");
  return (
    <span className={cls} data-tone={tone} title={title}>
      {children}
    </span>
  );
}

const STATE_LABEL: Record<TrustState, string> = {
  trusted: "Trusted",
  escalated: "Escalated",
  recovering: "Recovering",
  blocked: "Blocked",
};

/** Trust state of a failure key. Accepts any casing ("TRUSTED" works too). */
export function StateBadge({ state, title }: { state: TrustState | (string & {}); title?: string }) {
  const s = String(state).toLowerCase() as TrustState;
  const known = s in STATE_LABEL;
  return (
    <Badge tone={known ? s : "neutral"} dot title={title}>
      {known ? STATE_LABEL[s] : humanize(String(state))}
    </Badge>
  );
}

const SEVERITY_TONE: Record<FailureSeverity, BadgeTone> = {
  transient: "neutral",
  not_found: "neutral",
  invalid_input: "neutral",
  validation: "neutral",
  timeout: "neutral",
  permission: "warning",
  server_error: "warning",
  repeated_auth: "danger",
  crash: "danger",
  corruption: "danger",
  security: "danger",
};

/** Failure severity (transient … security). Neutral for routine failures, amber/red for the serious ones. */
export function SeverityBadge({ severity }: { severity: FailureSeverity | (string & {}) }) {
  const tone = SEVERITY_TONE[severity as FailureSeverity] ?? "neutral";
  return (
    <Badge tone={tone} square>
      {humanize(severity)}
    </Badge>
  );
}

/** Behavioural-pattern severity: minor / moderate / severe. */
export function PatternSeverityBadge({ severity }: { severity: PatternSeverity | (string & {}) }) {
  const s = String(severity).toLowerCase();
  const tone: BadgeTone = s === "minor" || s === "moderate" || s === "severe" ? s : "neutral";
  return (
    <Badge tone={tone} dot>
      {humanize(s)}
    </Badge>
  );
}

/** Organization role. */
export function RoleBadge({ role }: { role: Role | (string & {}) }) {
  const r = String(role).toLowerCase();
  const tone: BadgeTone = r === "owner" || r === "admin" || r === "member" || r === "viewer" ? r : "neutral";
  return (
    <Badge tone={tone} square>
      {humanize(r)}
    </Badge>
  );
}

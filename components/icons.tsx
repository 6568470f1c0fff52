import type { SVGProps } from "react";

/** 16px stroke icons (Lucide-style geometry, drawn inline to avoid a dependency). */
const PATHS = {
  overview: "M2.5 2.5h4.5v5.5H2.5zM9 2.5h4.5v3H9zM9 7.5h4.5v6H9zM2.5 10h4.5v3.5H2.5z",
  tools: "M10.2 2.6a3.3 3.3 0 0 0-4 4.2L2.6 10.4a1.4 1.4 0 0 0 2 2l3.6-3.6a3.3 3.3 0 0 0 4.2-4l-2 2-1.7-.5-.5-1.7z",
  failures: "M8 2.2 14 13H2zM8 6.5v3M8 11.3v.2",
  sessions: "M2.5 3.5h11v7h-6l-3 2.5v-2.5h-2z",
  patterns: "M2 12.5l3.5-4 3 2.5L14 4.5M10.5 4.5H14V8",
  models: "M8 1.8l5.5 3.1v6.2L8 14.2l-5.5-3.1V4.9zM8 8l5.3-3M8 8 2.7 5M8 8v6",
  approvals: "M3 8.3l3 3 7-7",
  settings:
    "M6.6 2h2.8l.4 1.8 1.4.8 1.8-.6 1.4 2.4-1.4 1.2v1.6l1.4 1.2-1.4 2.4-1.8-.6-1.4.8L9.4 14H6.6l-.4-1.8-1.4-.8-1.8.6-1.4-2.4L3 8.4V6.8L1.6 5.6 3 3.2l1.8.6 1.4-.8zM8 10a2 2 0 1 0 0-4 2 2 0 0 0 0 4z",
  audit: "M4 1.8h5.5L12.5 5v9.2H4zM9.5 1.8V5h3M6 8h4.5M6 10.5h4.5",
  workspaces: "M2 4.5h5v3.5H2zM9 4.5h5v3.5H9zM2 10h5v2.5H2zM9 10h5v2.5H9z",
  members: "M6 7.5a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5zM1.5 13.5c.5-2.3 2.3-3.8 4.5-3.8s4 1.5 4.5 3.8M10.5 2.8a2.5 2.5 0 0 1 0 4.6M12 9.9c1.3.6 2.2 1.8 2.5 3.6",
  defaults: "M2.5 4.5h7M12 4.5h1.5M2.5 11.5h1.5M6.5 11.5h7M10.7 6a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3zM5.2 13a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3z",
  globe: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM2 8h12M8 2c1.6 1.7 2.4 3.7 2.4 6S9.6 12.3 8 14M8 2C6.4 3.7 5.6 5.7 5.6 8s.8 4.3 2.4 6",
  menu: "M2.5 4h11M2.5 8h11M2.5 12h11",
  x: "M4 4l8 8M12 4l-8 8",
  chevronDown: "M4.5 6.5 8 10l3.5-3.5",
  chevronUp: "M4.5 9.5 8 6l3.5 3.5",
  chevronLeft: "M9.5 4.5 6 8l3.5 3.5",
  chevronRight: "M6.5 4.5 10 8l-3.5 3.5",
  chevronsUpDown: "M5 6l3-3 3 3M5 10l3 3 3-3",
  arrowUp: "M8 13V3M4 7l4-4 4 4",
  arrowDown: "M8 3v10M4 9l4 4 4-4",
  arrowUpDown: "M5 3v10M2.5 5.5 5 3l2.5 2.5M11 13V3M8.5 10.5 11 13l2.5-2.5",
  check: "M3 8.3l3 3 7-7",
  alert: "M8 2.2 14 13H2zM8 6.5v3M8 11.3v.2",
  alertCircle: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM8 5v3.5M8 10.8v.2",
  info: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM8 7.2V11M8 5v.2",
  checkCircle: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM5.5 8.2l1.8 1.8 3.3-3.6",
  inbox: "M2 9l2-6h8l2 6v4H2zM2 9h3.5l1 1.5h3l1-1.5H14",
  refresh: "M13 3v3.5H9.5M3 13V9.5h3.5M12.6 6.5A5 5 0 0 0 3.8 5M3.4 9.5a5 5 0 0 0 8.8 1.5",
  logout: "M6 14H3.5a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1H6M10.5 11 13.5 8l-3-3M13.5 8H6",
  search: "M7 12A5 5 0 1 0 7 2a5 5 0 0 0 0 10zM14 14l-3.5-3.5",
  plus: "M8 3v10M3 8h10",
  pause: "M5.5 3v10M10.5 3v10",
  play: "M4.5 2.8v10.4L13 8z",
  clock: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM8 4.5V8l2.5 1.5",
  key: "M5.5 13.5a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM7.6 8.4 13 3M11 5l1.8 1.8M9.5 6.5l1.3 1.3",
  external: "M9 2.5h4.5V7M13.5 2.5 7.5 8.5M12 9.5v3a1 1 0 0 1-1 1H3.5a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1h3",
  filter: "M2 3h12L9.5 8.5V13l-3-1.5v-3z",
  more: "M3.5 8h.01M8 8h.01M12.5 8h.01",
  plug: "M6 2v3.5M10 2v3.5M4 5.5h8v2.5a4 4 0 0 1-8 0zM8 12v2.5",
  copy: "M5.5 5.5h8v8h-8zM10.5 5.5v-3h-8v8h3",
  shield: "M8 1.8 13 3.8v4c0 3-2.2 5.3-5 6.4-2.8-1.1-5-3.4-5-6.4v-4z",
  ban: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM3.8 3.8l8.4 8.4",
  help: "M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12zM6.2 6.2a1.9 1.9 0 1 1 2.6 1.8c-.5.2-.8.6-.8 1.1v.4M8 11.3v.2",
  shieldCheck: "M8 1.8 13 3.8v4c0 3-2.2 5.3-5 6.4-2.8-1.1-5-3.4-5-6.4v-4zM5.8 8l1.6 1.6 3-3.2",
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({
  name,
  size = 16,
  strokeWidth = 1.5,
  label,
  ...rest
}: { name: IconName; size?: number; strokeWidth?: number; label?: string } & Omit<SVGProps<SVGSVGElement>, "name">) {
  const fillDots = name === "more";
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth={fillDots ? 2.5 : strokeWidth}
      strokeLinecap="round"
      strokeLinejoin="round"
      role={label ? "img" : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : true}
      focusable="false"
      {...rest}
    >
      <path d={PATHS[name]} />
    </svg>
  );
}

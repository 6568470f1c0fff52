/** A stall's severities and the ladder that maps a count to one (SPEC 5). */
export const PATTERN_SEVERITIES = ["minor", "moderate", "severe"] as const;
export type PatternSeverity = (typeof PATTERN_SEVERITIES)[number];

/** The counts at which a pattern is reported as minor, moderate and severe (non-decreasing: equal levels reach the higher severity directly). */
export interface PatternThresholds {
  minor: number;
  moderate: number;
  severe: number;
}

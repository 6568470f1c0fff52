import type { CheckAnswer } from "./types.js";

/** A tool call Vigil did not let run: `deny`, `pause`, or an `ask` no person approved. The message is Vigil's reason, meant for the model. */
export class VigilDecisionError extends Error {
  readonly decision: CheckAnswer["decision"];
  readonly answer: CheckAnswer;
  constructor(answer: CheckAnswer) {
    super(answer.reason ?? defaultReason(answer));
    this.name = "VigilDecisionError";
    this.decision = answer.decision;
    this.answer = answer;
  }
}

function defaultReason(answer: CheckAnswer): string {
  if (answer.decision === "pause") return "Vigil paused this session; a person resumes it in the dashboard.";
  if (answer.decision === "ask") return `Vigil asks a person to approve ${answer.failureKey || "this call"} first.`;
  return `Vigil denied ${answer.failureKey || "this call"}.`;
}

/** Vigil answered with an error (4xx, or 5xx/429 after the retries). */
export class VigilApiError extends Error {
  readonly status: number;
  readonly code: string | null;
  readonly procedure: string;
  /** Field problems of a 400: `{ path, message, code }`. */
  readonly issues: { path: (string | number)[]; message: string; code?: string }[];
  constructor(procedure: string, status: number, message: string, code: string | null, issues: VigilApiError["issues"] = []) {
    super(status === 401 ? "401: the API key was not accepted (VIGIL_API_KEY)" : `${status}: ${message}`);
    this.name = "VigilApiError";
    this.status = status;
    this.code = code;
    this.procedure = procedure;
    this.issues = issues;
  }
}

/** Vigil could not be reached (refused, DNS, time-out). */
export class VigilUnreachableError extends Error {
  readonly url: string;
  constructor(url: string, cause: unknown) {
    super(`Vigil could not be reached at ${url}: ${describeCause(cause)}`, { cause });
    this.name = "VigilUnreachableError";
    this.url = url;
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    if (inner instanceof Error && inner.message) return `${cause.message} (${(inner as Error & { code?: string }).code ?? inner.message})`;
    return cause.message;
  }
  return String(cause);
}

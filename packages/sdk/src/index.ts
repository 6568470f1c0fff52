/** @vigil/sdk — the core client (SPEC 7.9). Adapters: `@vigil/sdk/ai`. */
export { Vigil, createVigil, cannotReach, type VigilOptions, type GuardToolOptions, type GuardedTool, type ToolContext, type StartSessionOptions, type ReportedCall } from "./client.js";
export { VigilApiError, VigilDecisionError, VigilUnreachableError } from "./errors.js";
export { SDK_VERSION } from "./transport.js";
export type * from "./types.js";

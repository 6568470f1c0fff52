/** Small helpers to write agent traffic in tests the way an agent would post it. */
let counter = 0;
export const uid = (p = "e") => `${p}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

export function call(sessionId: string, toolName: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const callId = uid("c");
  return { type: "tool.call", id: uid(), sessionId, callId, toolName, args, ...extra };
}

export function result(sessionId: string, toolName: string, args: Record<string, unknown>, outcome: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { type: "tool.result", id: uid(), sessionId, callId: uid("c"), toolName, args, ...outcome, ...extra };
}

export const at = (base: number, minutes: number) => new Date(base + minutes * 60_000).toISOString();

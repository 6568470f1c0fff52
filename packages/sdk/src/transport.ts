/**
 * tRPC over plain HTTP with no transformer (SPEC 7): mutations POST the JSON input, queries GET
 * `?input=`, answers are `{"result":{"data":…}}`. 429 and 503 are retried after `Retry-After`.
 */
import { VigilApiError, VigilUnreachableError } from "./errors.js";

export interface TransportOptions {
  url: string;
  apiKey: string;
  /** Per-request time-out (ms), on top of any approval wait. Default 10 000. */
  timeoutMs?: number;
  /** Retries of a 429/503 answer. Default 3. */
  maxRetries?: number;
  /** Longest wait between retries (ms), whatever `Retry-After` says. Default 30 000. */
  maxRetryDelayMs?: number;
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof fetch;
}

export const SDK_VERSION = "0.1.0";

export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: TransportOptions) {
    this.baseUrl = options.url.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  query<T>(procedure: string, input?: unknown): Promise<T> {
    return this.call<T>("GET", procedure, input);
  }

  mutation<T>(procedure: string, input: unknown, extraTimeoutMs = 0): Promise<T> {
    return this.call<T>("POST", procedure, input, extraTimeoutMs);
  }

  private async call<T>(method: "GET" | "POST", procedure: string, input: unknown, extraTimeoutMs = 0): Promise<T> {
    let url = `${this.baseUrl}/api/trpc/${procedure}`;
    if (method === "GET" && input !== undefined) url += `?input=${encodeURIComponent(JSON.stringify(input))}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, "user-agent": `vigil-sdk/${SDK_VERSION}` };
    if (method === "POST") headers["content-type"] = "application/json";
    const body = method === "POST" ? JSON.stringify(input ?? {}) : undefined;

    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs + extraTimeoutMs) });
      } catch (error) {
        throw new VigilUnreachableError(url.split("?")[0], error);
      }
      if ((res.status === 429 || res.status === 503) && attempt < this.maxRetries) {
        await res.body?.cancel().catch(() => {});
        await sleep(this.retryDelay(res.headers.get("retry-after"), attempt));
        continue;
      }
      const text = await res.text().catch(() => "");
      let parsed: any = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      if (res.ok && parsed && typeof parsed === "object" && "result" in parsed) return parsed.result?.data as T;
      const error = parsed?.error;
      const message = typeof error?.message === "string" ? error.message : text.slice(0, 200) || res.statusText || "no answer";
      throw new VigilApiError(procedure, res.status, message, error?.data?.code ?? null, Array.isArray(error?.data?.issues) ? error.data.issues : []);
    }
  }

  /** `Retry-After` in seconds or as an HTTP date; else exponential back-off from 250 ms with jitter. */
  private retryDelay(retryAfter: string | null, attempt: number): number {
    let ms: number | null = null;
    if (retryAfter) {
      const seconds = Number(retryAfter);
      if (Number.isFinite(seconds)) ms = seconds * 1000;
      else {
        const at = Date.parse(retryAfter);
        if (Number.isFinite(at)) ms = at - Date.now();
      }
    }
    if (ms === null || ms < 0) ms = 250 * 2 ** attempt * (0.75 + Math.random() * 0.5);
    return Math.min(ms, this.maxRetryDelayMs);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

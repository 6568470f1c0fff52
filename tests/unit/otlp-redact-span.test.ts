import { describe, expect, it } from "vitest";
import { redactAttributes, redactSpan } from "@/server/otlp/redact-span";
import type { OtlpSpan } from "@/server/otlp/decode";

const SESSION = "sess_9fK2mQ7xLp4Rz8Vw1Tn6Yb3Hc5Jd0Ge"; // looks random: a token test alone would hide it
const CALL = "call_Zq8Lm3Vx7Rt2WpAb4Cd6Ef8Gh0Ij2Kl";

describe("OTLP span redaction", () => {
  it("hides secrets inside JSON-in-string arguments and messages, keeps ids, names and token counts", () => {
    const out = redactAttributes({
      "session.id": SESSION,
      "ai.telemetry.metadata.sessionId": SESSION,
      "gen_ai.tool.call.id": CALL,
      "gen_ai.tool.name": "http_request",
      "gen_ai.usage.input_tokens": 812,
      "gen_ai.tool.call.arguments": JSON.stringify({ url: "https://api.example.com/v1/users?token=abcdef123456", headers: { authorization: "Bearer AuTh9dEf6hIj9kLmN0pQrS" }, password: "pw-Hunter2" }),
      "ai.response.toolCalls": JSON.stringify([{ toolCallId: CALL, toolName: "login", args: JSON.stringify({ api_key: "apikey-Wv5Xy8Za1Bc4Dd", user: "ann" }) }]),
      "ai.response.text": "Logged in with password=pw-Hunter2 and sk-live0123456789abcdefXYZ",
      "http.request.header.authorization": "Bearer AuTh9dEf6hIj9kLmN0pQrS",
    });
    const text = JSON.stringify(out);
    for (const secret of ["pw-Hunter2", "AuTh9dEf6hIj9kLmN0pQrS", "apikey-Wv5Xy8Za1Bc4Dd", "abcdef123456", "sk-live0123456789abcdefXYZ"]) expect(text).not.toContain(secret);
    expect(out["session.id"]).toBe(SESSION);
    expect(out["ai.telemetry.metadata.sessionId"]).toBe(SESSION);
    expect(out["gen_ai.tool.call.id"]).toBe(CALL);
    expect(out["gen_ai.usage.input_tokens"]).toBe(812);
    const args = JSON.parse(out["gen_ai.tool.call.arguments"] as string);
    expect(args).toMatchObject({ url: "https://api.example.com/v1/users?token=[redacted]", headers: { authorization: "[redacted]" }, password: "[redacted]" });
    const calls = JSON.parse(out["ai.response.toolCalls"] as string);
    expect(calls[0]).toMatchObject({ toolCallId: CALL, toolName: "login" });
    expect(JSON.parse(calls[0].args)).toEqual({ api_key: "[redacted]", user: "ann" });
  });

  it("redacts event attributes, resource attributes and the status message; leaves text that is not JSON as text", () => {
    const span: OtlpSpan = {
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      parentSpanId: null,
      name: "execute_tool login",
      startTimeUnixNano: 1n,
      endTimeUnixNano: 2n,
      attributes: { "input.value": "{not json password=pw-Hunter2" },
      resource: { "service.name": "agent", "deployment.secret": "s3cr3t-value" },
      scope: { name: "ai", version: null },
      events: [{ name: "exception", timeUnixNano: 1n, attributes: { "exception.message": "401 for Bearer AuTh9dEf6hIj9kLmN0pQrS" } }],
      status: { code: 2, message: "token=tok-Zq8Lm3Vx7Rt2Wp rejected" },
    };
    const out = redactSpan(span);
    expect(out.attributes["input.value"]).toBe("{not json password=[redacted]");
    expect(out.resource).toEqual({ "service.name": "agent", "deployment.secret": "[redacted]" });
    expect(out.events[0].attributes["exception.message"]).toBe("401 for Bearer [redacted]");
    expect(out.status).toEqual({ code: 2, message: "token=[redacted] rejected" });
    expect(out.startTimeUnixNano).toBe(1n);
  });
});

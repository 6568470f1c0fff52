"use client";

/**
 * The test box: a tool name and arguments → what the policies and built-in risk rules decide, and
 * which one decided (`wsPolicies.test` / `orgPolicies.test`, the engine function behind the agent
 * API's `policies.test`; records nothing). While a policy is being edited and valid, the unsaved
 * edit is what is tested.
 */
import { useState } from "react";
import { Button, Field, TextInput, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import type { ConfigScope } from "@/components/config/config-context";
import { errorMessage, useTRPCClient } from "@/lib/trpc/client";
import type { SnakeConfigDocument } from "@/server/engine/config";
import type { PolicyTestResult } from "@/server/dashboard/policies";
import { DecisionBadge } from "./decision-badge";

function parseArgs(text: string): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  if (!text.trim()) return { ok: true, args: {} };
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== "object" || Array.isArray(v)) return { ok: false, error: 'Arguments are a JSON object, e.g. {"command": "ls"}' };
    return { ok: true, args: v as Record<string, unknown> };
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${(e as Error).message}` };
  }
}

export function PolicyTestBox({ scope, draft }: { scope: ConfigScope; draft: SnakeConfigDocument | null }) {
  const client = useTRPCClient();
  const [toolName, setToolName] = useState("Bash");
  const [argsText, setArgsText] = useState('{ "command": "rm -rf ~" }');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<(PolicyTestResult & { draftUsed: boolean; toolName: string }) | null>(null);
  const [error, setError] = useState<string | null>(null);
  const parsed = parseArgs(argsText);

  const run = async () => {
    if (!parsed.ok || !toolName.trim()) return;
    setBusy(true);
    setError(null);
    try {
      const input = { toolName: toolName.trim(), args: parsed.args, draft: draft ?? undefined };
      const r =
        scope.level === "workspace"
          ? await client.wsPolicies.test.query({ workspaceSlug: scope.workspaceSlug, ...input })
          : await client.orgPolicies.test.query({ organizationId: scope.organizationId, ...input });
      setResult({ ...r, toolName: input.toolName });
    } catch (e) {
      setResult(null);
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section
      id="test"
      title="Test a call"
      description={
        scope.level === "workspace"
          ? "What this workspace's policies, its organization's and the built-in rules decide for a call. Nothing is recorded."
          : "What the organization's policies and the built-in rules decide for a call (a workspace adds its own). Nothing is recorded."
      }
    >
      <form
        className="card card-body pol-test"
        aria-label="Test a call"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <div className="pol-test-inputs">
          <Field label="Tool name" error={toolName.trim() ? undefined : "Enter a tool name"}>
            <TextInput mono size="sm" value={toolName} onChange={(e) => setToolName(e.target.value)} placeholder="Bash" />
          </Field>
          <Field label="Arguments (JSON)" error={parsed.ok ? undefined : parsed.error}>
            <Textarea mono rows={3} value={argsText} onChange={(e) => setArgsText(e.target.value)} spellCheck={false} />
          </Field>
        </div>
        <div className="form-actions">
          <Button type="submit" size="sm" variant="primary" loading={busy} disabled={!parsed.ok || !toolName.trim()}>
            Test
          </Button>
          {draft && <span className="text-sm subtle">Tests the policy being edited (unsaved).</span>}
        </div>
        {error && (
          <div className="callout" data-tone="danger" role="alert">
            <Icon name="alertCircle" />
            <span>{error}</span>
          </div>
        )}
        {result && (
          <div className="pol-test-result" role="status" data-testid="policy-test-result" data-decision={result.decision}>
            <span className="row row-wrap" style={{ gap: 8 }}>
              <DecisionBadge decision={result.decision} />
              {result.policy ? (
                <span>
                  by{" "}
                  {result.policy.level === "builtin" ? (
                    <>
                      built-in rule <span className="mono strong">{result.policy.name}</span>
                    </>
                  ) : (
                    <>
                      {result.policy.level} policy <span className="mono strong">{result.policy.name}</span>
                    </>
                  )}
                </span>
              ) : (
                <span className="muted">no policy or built-in rule matches <span className="mono">{result.toolName}</span></span>
              )}
              {result.draftUsed && <span className="text-xs subtle">(with the unsaved edit)</span>}
            </span>
            {result.policy && <span className="text-sm muted">{result.policy.reason}</span>}
            {result.riskRule && result.policy?.level !== "builtin" && (
              <span className="text-xs subtle">
                Built-in rule <span className="mono">{result.riskRule}</span> also matches.
              </span>
            )}
          </div>
        )}
      </form>
    </Section>
  );
}

"use client";

/**
 * The Connect page's interactive part: agent name and approval wait, one tab per agent kind with
 * its configuration ready to paste (and a copy button), and the live "last event received" check.
 */
import { useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { Button, Field, NumberInput, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { Tabs } from "@/components/tabs";
import { useTRPC } from "@/lib/trpc/client";
import type { LastEvent } from "@/server/dashboard/connect";
import { MAX_WAIT_SECONDS } from "@/server/hooks/limits";
import { claudeCodeSettings, codexHooks, geminiSettings, httpExample, otelEnv, type ConnectOptions } from "./connect-configs";

export const LAST_EVENT_POLL_MS = 3000;

function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <Button
      size="xs"
      variant="secondary"
      aria-label={`Copy ${label}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState("copied");
        } catch {
          setState("failed");
        }
        window.setTimeout(() => setState("idle"), 2000);
      }}
    >
      <Icon name={state === "copied" ? "check" : "copy"} />
      {state === "copied" ? "Copied" : state === "failed" ? "Select and copy" : "Copy"}
    </Button>
  );
}

function Snippet({ file, text, children }: { file: string; text: string; children?: ReactNode }) {
  return (
    <div className="stack connect-snippet">
      {children && <div className="text-sm stack connect-snippet-notes">{children}</div>}
      <div className="row connect-snippet-head">
        <span className="mono text-sm">{file}</span>
        <CopyButton text={text} label={file} />
      </div>
      <pre className="code" tabIndex={0} aria-label={file}>
        {text}
      </pre>
    </div>
  );
}

function LastEventCheck({ slug, initial }: { slug: string; initial: LastEvent | null }) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.ws.connect.lastEvent.queryOptions({ workspaceSlug: slug }, { refetchInterval: LAST_EVENT_POLL_MS, staleTime: 0, initialData: initial }),
  );
  const last = q.data ?? null;
  return (
    <div className={`connect-live ${last ? "connect-live-ok" : ""}`} role="status" aria-live="polite" data-testid="last-event">
      <span className="connect-live-dot" aria-hidden="true" />
      {last ? (
        <span>
          Last event received <RelativeTime date={last.receivedAt} />: <span className="mono">{last.type}</span>
          {last.toolName ? (
            <>
              {" "}
              (<span className="mono">{last.toolName}</span>)
            </>
          ) : null}{" "}
          from <span className="mono">{last.agent ?? "an agent"}</span>, session{" "}
          <a className="mono" href={`/w/${slug}/sessions/${encodeURIComponent(last.sessionId)}`}>
            {last.sessionId.length > 40 ? `${last.sessionId.slice(0, 40)}…` : last.sessionId}
          </a>
        </span>
      ) : (
        <span>No event received yet — waiting for the first one (checked every {LAST_EVENT_POLL_MS / 1000} s).</span>
      )}
    </div>
  );
}

export function ConnectPanel({ slug, baseUrl, canConfigure, initialLastEvent }: { slug: string; baseUrl: string; canConfigure: boolean; initialLastEvent: LastEvent | null }) {
  const [agent, setAgent] = useState("");
  const [wait, setWait] = useState(0);
  const o: ConnectOptions = { baseUrl, agent, waitSeconds: Math.max(0, Math.min(MAX_WAIT_SECONDS, Math.floor(wait || 0))) };
  const keyHint = canConfigure ? (
    <>
      Create a key in <a href={`/w/${slug}/settings?tab=api-keys`}>Settings → API keys</a> and export it as <span className="mono">VIGIL_API_KEY</span> where the agent runs.
    </>
  ) : (
    <>
      Ask an admin for an API key and export it as <span className="mono">VIGIL_API_KEY</span> where the agent runs.
    </>
  );

  const items = [
    {
      id: "claude-code",
      label: "Claude Code",
      content: (
        <Snippet file="~/.claude/settings.json (or .claude/settings.json in the project)" text={claudeCodeSettings(o)}>
          <p>
            Claude Code posts each hook straight to Vigil (<span className="mono">&quot;type&quot;: &quot;http&quot;</span>): nothing to install. Merge
            this into your settings. {keyHint}
          </p>
          <p>
            Hooks time out after 10 s (Claude Code&apos;s default is 600 s, after which it lets the tool run anyway). A PermissionRequest waits up to{" "}
            {Math.max(o.waitSeconds, 60)} s for a person in Approvals when Vigil holds a call back.
          </p>
        </Snippet>
      ),
    },
    {
      id: "codex",
      label: "Codex CLI",
      content: (
        <Snippet file="$CODEX_HOME/hooks.json (~/.codex/hooks.json)" text={codexHooks(o)}>
          <p>
            Codex runs command hooks: <span className="mono">curl</span> pipes each payload to Vigil and prints the answer. {keyHint}
          </p>
          <p>
            Turn hooks on in <span className="mono">$CODEX_HOME/config.toml</span> (<span className="mono">[features]</span>{" "}
            <span className="mono">hooks = true</span>); Codex runs them in trusted projects once you have trusted them (automation that vets its
            hooks can pass <span className="mono">--dangerously-bypass-hook-trust</span>).
          </p>
          <p>Codex ignores &quot;ask&quot;: a call Vigil holds back is denied with Vigil&apos;s reason, which the model reads.</p>
        </Snippet>
      ),
    },
    {
      id: "gemini",
      label: "Gemini CLI",
      content: (
        <Snippet file=".gemini/settings.json (or ~/.gemini/settings.json)" text={geminiSettings(o)}>
          <p>
            Gemini CLI runs command hooks (timeouts in milliseconds): <span className="mono">curl</span> pipes each payload to Vigil. {keyHint}
          </p>
        </Snippet>
      ),
    },
    {
      id: "otel",
      label: "OpenTelemetry",
      content: (
        <Snippet file="environment of the instrumented agent" text={otelEnv(o)}>
          <p>Any OTLP/HTTP trace exporter (JSON or protobuf): tool spans become tool calls and results, agent spans start sessions.</p>
        </Snippet>
      ),
    },
    {
      id: "http",
      label: "Plain HTTP",
      content: (
        <Snippet file="any HTTP client" text={httpExample(o)}>
          <p>
            Every procedure is tRPC over plain JSON (no transformer). See <span className="mono">docs/agent-api.md</span> in the Vigil repository for the
            full contract.
          </p>
        </Snippet>
      ),
    },
  ];

  return (
    <div className="stack connect-page">
      <LastEventCheck slug={slug} initial={initialLastEvent} />
      <div className="connect-options">
        <Field label="Agent name" hint="Sessions are grouped under it (default: the CLI's name).">
          <TextInput value={agent} onChange={(e) => setAgent(e.target.value)} placeholder="e.g. release-bot" maxLength={200} />
        </Field>
        <Field label="Wait for approval (seconds)" hint={`Unattended agents: a call Vigil holds back waits up to this long for a person in Approvals (0–${MAX_WAIT_SECONDS}).`}>
          <NumberInput value={wait} onChange={(e) => setWait(Number(e.target.value))} min={0} max={MAX_WAIT_SECONDS} step={10} />
        </Field>
      </div>
      <Tabs label="Agent kind" items={items} />
    </div>
  );
}

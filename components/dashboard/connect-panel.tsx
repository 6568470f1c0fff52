"use client";

/**
 * The Connect page's interactive part: an API key created inline (shown once, filled into the
 * commands), agent name and approval wait, one tab per agent kind — the one-step `vigil connect`
 * command and a check that turns green when THAT CLI's first event arrives — Vigil's MCP tools, and
 * the configuration of the other kinds ready to paste.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { Button, Field, NumberInput, Select, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { Tabs } from "@/components/tabs";
import { errorMessage, fieldErrors, useTRPC } from "@/lib/trpc/client";
import type { CliLastEvents, LastEvent } from "@/server/dashboard/connect";
import { MAX_WAIT_SECONDS } from "@/server/hooks/limits";
import {
  CLI_INFO,
  claudeCodeSettings,
  codexHooks,
  connectSteps,
  geminiSettings,
  httpExample,
  EXAMPLE_MCP_SERVER,
  MCP_CLIENTS,
  mcpClientConfigs,
  splitCommand,
  type McpClient,
  otelEnv,
  type ConnectOptions,
  type ConnectTarget,
} from "./connect-configs";

const LAST_EVENT_POLL_MS = 3000;

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

function EventSummary({ slug, last }: { slug: string; last: LastEvent }) {
  return (
    <>
      <RelativeTime date={last.receivedAt} />: <span className="mono">{last.type}</span>
      {last.toolName ? (
        <>
          {" "}
          (<span className="mono">{last.toolName}</span>)
        </>
      ) : null}{" "}
      from <span className="mono">{last.agent ?? "an agent"}</span>, session{" "}
      <a className="mono" href={`/w/${slug}/sessions/${encodeURIComponent(last.sessionId)}`} title={last.sessionId}>
        {last.sessionId.length > 40 ? `${last.sessionId.slice(0, 40)}…` : last.sessionId}
      </a>
    </>
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
          Last event received from any agent <EventSummary slug={slug} last={last} />
        </span>
      ) : (
        <span>No event received yet — waiting for the first one (checked every {LAST_EVENT_POLL_MS / 1000} s).</span>
      )}
    </div>
  );
}

/** Green once an event came through this CLI's hooks (not any agent's): the CLI is connected. */
function CliEventCheck({ slug, cli, initial }: { slug: string; cli: ConnectTarget; initial: CliLastEvents }) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.ws.connect.cliLastEvents.queryOptions({ workspaceSlug: slug }, { refetchInterval: LAST_EVENT_POLL_MS, staleTime: 0, initialData: initial }),
  );
  const last = q.data?.[cli] ?? null;
  const { label, trigger } = CLI_INFO[cli];
  return (
    <div className={`connect-live ${last ? "connect-live-ok" : ""}`} role="status" aria-live="polite" data-testid={`cli-check-${cli}`} data-state={last ? "connected" : "waiting"}>
      <span className="connect-live-dot" aria-hidden="true" />
      {last ? (
        <span>
          <strong>{label} is connected.</strong> Last {label} event <EventSummary slug={slug} last={last} />
        </span>
      ) : (
        <span className="stack stack-sm connect-live-waiting">
          <span>
            <strong>Waiting for the first {label} event…</strong> (checked every {LAST_EVENT_POLL_MS / 1000} s)
          </span>
          <span>
            To send one, run {label} in a project, e.g. <code className="mono connect-trigger">{trigger}</code>
          </span>
        </span>
      )}
    </div>
  );
}

/** Step 1: an agent-scope key, created here and shown once; viewers and members see who can make one. */
function KeyStep({
  slug,
  canConfigure,
  created,
  onCreated,
}: {
  slug: string;
  canConfigure: boolean;
  created: { name: string; value: string } | null;
  onCreated: (key: { name: string; value: string }) => void;
}) {
  const trpc = useTRPC();
  const create = useMutation(trpc.apiKeys.create.mutationOptions());
  const [name, setName] = useState("coding agents");
  const errs = fieldErrors(create.error);
  if (!canConfigure) {
    return (
      <div className="callout" role="note" data-testid="key-step">
        <Icon name="key" />
        <div className="text-sm">
          <strong>API keys are made by admins.</strong> Your role can see this page but not create keys: ask an admin or owner of the
          organization for an <span className="mono">agent</span> key (Settings → API keys), then put it in place of{" "}
          <span className="mono">vgl_…</span> below.
        </div>
      </div>
    );
  }
  if (created) {
    return (
      <div className="callout" data-tone="warning" role="status" data-testid="new-api-key">
        <Icon name="alert" />
        <div className="stack stack-sm" style={{ minWidth: 0, flex: 1 }}>
          <strong>Key “{created.name}” created — it is filled into the commands below. Copy them now: the key is shown only once.</strong>
          <div className="row row-wrap">
            <code className="code connect-key-value">{created.value}</code>
            <CopyButton text={created.value} label="API key" />
          </div>
          <span className="text-sm muted">
            Agent scope: events, guard checks and sessions. Revoke it in <a href={`/w/${slug}/settings?tab=api-keys`}>Settings → API keys</a>.
          </span>
        </div>
      </div>
    );
  }
  return (
    <form
      className="connect-key-form"
      noValidate
      data-testid="key-step"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const r = await create.mutateAsync({ workspaceSlug: slug, name, scope: "agent" });
          onCreated({ name: name.trim(), value: r.value });
        } catch {
          /* shown below */
        }
      }}
    >
      <Field label="API key" hint="An agent-scope key for the CLI, shown once and filled into the commands below." error={errs.name ?? (create.error ? errorMessage(create.error) : undefined)}>
        <TextInput value={name} onChange={(e) => setName(e.target.value)} maxLength={100} aria-label="Key name" />
      </Field>
      <Button type="submit" variant="primary" loading={create.isPending}>
        <Icon name="plus" /> Create key
      </Button>
    </form>
  );
}

/** Vigil in front of the user's MCP servers (`vigil mcp-proxy`) and Vigil's own tools (/api/mcp), in the chosen client's own file. */
type McpForm = { client: McpClient; name: string; command: string };
const MCP_FORM: McpForm = { client: "claude-code", name: EXAMPLE_MCP_SERVER.name, command: EXAMPLE_MCP_SERVER.command.join(" ") };

function McpTab({ o, apiKey, form, onChange }: { o: ConnectOptions; apiKey: string | null; form: McpForm; onChange: (form: McpForm) => void }) {
  const { client, name, command } = form;
  const setClient = (v: McpClient) => onChange({ ...form, client: v });
  const setName = (v: string) => onChange({ ...form, name: v });
  const setCommand = (v: string) => onChange({ ...form, command: v });
  const words = splitCommand(command);
  const server = { name: name.trim() || EXAMPLE_MCP_SERVER.name, command: words.length ? words : EXAMPLE_MCP_SERVER.command };
  const configs = mcpClientConfigs(o, server, apiKey);
  const c = configs.find((x) => x.client === client)!;
  return (
    <div className="stack connect-mcp">
      <div className="text-sm stack connect-snippet-notes">
        <p>
          <strong>Guard an MCP server.</strong> <span className="mono">vigil mcp-proxy</span> starts the server&apos;s own command and checks each of its
          tool calls with Vigil first: a call Vigil denies never reaches the server, an escalated one asks you in the client (or waits for Approvals),
          and every result is reported. Everything else passes through unchanged. If Vigil cannot be reached, calls run (add{" "}
          <span className="mono nowrap">--fail closed</span> to refuse them).
        </p>
      </div>
      <div className="connect-options connect-mcp-options">
        <Field label="MCP client">
          <Select value={client} onChange={(e) => setClient(e.target.value as McpClient)} options={MCP_CLIENTS.map((id) => ({ value: id, label: configs.find((x) => x.client === id)!.label }))} />
        </Field>
        <Field label="Server name" hint="Its name in the client's configuration.">
          <TextInput value={name} onChange={(e) => setName(e.target.value)} maxLength={100} mono />
        </Field>
        <Field label="Server command" hint="What the client runs today to start the server.">
          <TextInput value={command} onChange={(e) => setCommand(e.target.value)} maxLength={2000} mono />
        </Field>
      </div>
      <Snippet file={`${c.label}: ${c.file}`} text={c.proxy}>
        <p>
          {c.label}: replace the server&apos;s entry with this one. {c.keyNote}
        </p>
      </Snippet>
      <Snippet file={`${c.label}: Vigil's own tools`} text={c.remote}>
        <p>
          <strong>Vigil&apos;s tools for the model.</strong> Vigil&apos;s MCP server at <span className="mono">{o.baseUrl}/api/mcp</span> lets the model ask
          how reliable its tools are (<span className="mono">reliability_status</span>, <span className="mono">reliability_session</span>) and ask a
          person for a reset (<span className="mono">reliability_request_reset</span>, answered in Approvals).
          {c.client === "claude-desktop" ? (
            <>
              {" "}
              Claude Desktop&apos;s file takes only local servers: <span className="mono">vigil mcp</span> carries the tools over stdio.
            </>
          ) : null}
        </p>
      </Snippet>
    </div>
  );
}

function CliTab({ slug, cli, o, apiKey, initial, config }: { slug: string; cli: ConnectTarget; o: ConnectOptions; apiKey: string | null; initial: CliLastEvents; config: ReactNode }) {
  const { label, settingsFile } = CLI_INFO[cli];
  return (
    <div className="stack connect-cli">
      <Snippet file={`Connect ${label} in one step`} text={connectSteps(cli, o, apiKey)}>
        <p>
          <span className="mono">vigil connect</span> merges Vigil&apos;s hooks into <span className="mono">{settingsFile}</span>: your other settings
          and hooks stay, the old file is kept as a backup (<span className="mono nowrap">--dry-run</span> shows the diff first,{" "}
          <span className="mono nowrap">--scope project</span> writes the project&apos;s file). The hooks read <span className="mono">VIGIL_API_KEY</span> each
          time {label} runs: put the two <span className="mono">export</span> lines in your shell profile.
        </p>
        <p className="muted">
          No <span className="mono">vigil</span> command yet? It comes with the SDK: in the Vigil repository,{" "}
          <span className="mono">cd packages/sdk &amp;&amp; npm pack &amp;&amp; npm install -g <span className="nowrap">./vigil-sdk-0.1.0.tgz</span></span>.
        </p>
      </Snippet>
      <CliEventCheck slug={slug} cli={cli} initial={initial} />
      <details className="connect-manual">
        <summary>Or paste the hooks by hand</summary>
        {config}
      </details>
    </div>
  );
}

export function ConnectPanel({
  slug,
  baseUrl,
  canConfigure,
  initialLastEvent,
  initialCliEvents,
}: {
  slug: string;
  baseUrl: string;
  canConfigure: boolean;
  initialLastEvent: LastEvent | null;
  initialCliEvents: CliLastEvents;
}) {
  const [agent, setAgent] = useState("");
  const [wait, setWait] = useState(0);
  const [createdKey, setCreatedKey] = useState<{ name: string; value: string } | null>(null);
  const [mcpForm, setMcpForm] = useState(MCP_FORM);
  const apiKey = createdKey?.value ?? null;
  const o: ConnectOptions = { baseUrl, agent, waitSeconds: Math.max(0, Math.min(MAX_WAIT_SECONDS, Math.floor(wait || 0))) };
  const keyHint = <>Export the key as <span className="mono">VIGIL_API_KEY</span> where the agent runs.</>;

  const items = [
    {
      id: "claude-code",
      label: "Claude Code",
      content: (
        <CliTab
          slug={slug}
          cli="claude-code"
          o={o}
          apiKey={apiKey}
          initial={initialCliEvents}
          config={
            <Snippet file="~/.claude/settings.json (or .claude/settings.json in the project)" text={claudeCodeSettings(o)}>
              <p>
                Claude Code posts each hook straight to Vigil (<span className="mono">&quot;type&quot;: &quot;http&quot;</span>): nothing to install.
                Merge this into your settings. {keyHint}
              </p>
              <p>
                Hooks time out after 10 s (Claude Code&apos;s default is 600 s, after which it lets the tool run anyway). A PermissionRequest waits up
                to {Math.max(o.waitSeconds, 60)} s for a person in Approvals when Vigil holds a call back.
              </p>
            </Snippet>
          }
        />
      ),
    },
    {
      id: "codex",
      label: "Codex CLI",
      content: (
        <CliTab
          slug={slug}
          cli="codex"
          o={o}
          apiKey={apiKey}
          initial={initialCliEvents}
          config={
            <Snippet file="$CODEX_HOME/hooks.json (~/.codex/hooks.json)" text={codexHooks(o)}>
              <p>
                Codex runs command hooks: <span className="mono">curl</span> pipes each payload to Vigil and prints the answer. {keyHint}
              </p>
              <p>
                Turn hooks on in <span className="mono">$CODEX_HOME/config.toml</span> (<span className="mono">[features]</span>{" "}
                <span className="mono">hooks = true</span>; <span className="mono">vigil connect codex</span> does it). Codex runs them in trusted
                projects once you have trusted them (automation that vets its hooks can pass{" "}
                <span className="mono nowrap">--dangerously-bypass-hook-trust</span>).
              </p>
              <p>Codex ignores &quot;ask&quot;: a call Vigil holds back is denied with Vigil&apos;s reason, which the model reads.</p>
            </Snippet>
          }
        />
      ),
    },
    {
      id: "gemini",
      label: "Gemini CLI",
      content: (
        <CliTab
          slug={slug}
          cli="gemini"
          o={o}
          apiKey={apiKey}
          initial={initialCliEvents}
          config={
            <Snippet file=".gemini/settings.json (or ~/.gemini/settings.json)" text={geminiSettings(o)}>
              <p>
                Gemini CLI runs command hooks (timeouts in milliseconds): <span className="mono">curl</span> pipes each payload to Vigil. {keyHint}
              </p>
            </Snippet>
          }
        />
      ),
    },
    {
      id: "mcp",
      label: "MCP servers",
      content: <McpTab o={o} apiKey={apiKey} form={mcpForm} onChange={setMcpForm} />,
    },
    {
      id: "otel",
      label: "OpenTelemetry",
      content: (
        <div className="stack">
          <Snippet file="environment of the instrumented agent" text={otelEnv(o, apiKey)}>
            <p>Any OTLP/HTTP trace exporter (JSON or protobuf): tool spans become tool calls and results, agent spans start sessions.</p>
          </Snippet>
          <LastEventCheck slug={slug} initial={initialLastEvent} />
        </div>
      ),
    },
    {
      id: "http",
      label: "Plain HTTP",
      content: (
        <div className="stack">
          <Snippet file="any HTTP client" text={httpExample(o)}>
            <p>
              Every procedure is tRPC over plain JSON (no transformer). See <span className="mono">docs/agent-api.md</span> in the Vigil repository for
              the full contract. {keyHint}
            </p>
          </Snippet>
          <LastEventCheck slug={slug} initial={initialLastEvent} />
        </div>
      ),
    },
  ];

  return (
    <div className="stack connect-page">
      <KeyStep slug={slug} canConfigure={canConfigure} created={createdKey} onCreated={setCreatedKey} />
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

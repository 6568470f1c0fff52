import { ButtonLink } from "@/components/form";
import { Icon } from "@/components/icons";

/** The ingest example for a workspace that has not received any events yet. */
function ingestCurlExample(baseUrl: string): string {
  const body = {
    events: [
      { type: "session.start", id: "evt-1", sessionId: "run-1", agent: "my-agent", model: "gpt-4o" },
      { type: "tool.call", id: "evt-2", sessionId: "run-1", callId: "call-1", toolName: "bash", args: { command: "ls -la" } },
      { type: "tool.result", id: "evt-3", sessionId: "run-1", callId: "call-1", toolName: "bash", success: true },
    ],
  };
  return [
    `curl -X POST ${baseUrl}/api/trpc/ingest.events \\`,
    `  -H "Authorization: Bearer $VIGIL_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"events": [`,
    body.events.map((e) => `    ${JSON.stringify(e)}`).join(",\n"),
    `  ]}'`,
  ].join("\n");
}

/**
 * Empty state of a new workspace: how to connect an agent (API key + the ingest.events curl call).
 * `compact` renders it as a callout inside an otherwise empty page section.
 */
export function ConnectAgent({
  baseUrl,
  slug,
  canConfigure,
  title = "Connect an agent",
}: {
  baseUrl: string;
  slug: string;
  canConfigure: boolean;
  title?: string;
}) {
  return (
    <section className="card connect-agent" aria-labelledby="connect-agent-title">
      <div className="card-head">
        <div className="row" style={{ gap: 10 }}>
          <span className="connect-icon" aria-hidden="true">
            <Icon name="inbox" />
          </span>
          <div>
            <h2 className="card-title" id="connect-agent-title">
              {title}
            </h2>
            <p className="card-subtitle">
              No events have reached <span className="mono">{slug}</span> yet. Agents post their tool calls and results to Vigil over HTTP.
            </p>
          </div>
        </div>
      </div>
      <div className="card-body stack">
        <ol className="connect-steps">
          <li>
            <span className="strong">Create an API key</span> for this workspace
            {canConfigure ? (
              <>
                {" "}
                in <a href={`/w/${slug}/settings?tab=api-keys`}>Settings → API keys</a>.
              </>
            ) : (
              <> — ask an admin of your organization (your role cannot create keys).</>
            )}
          </li>
          <li>
            <span className="strong">Post events</span> to <span className="mono">{baseUrl}/api/trpc/ingest.events</span>:
          </li>
        </ol>
        <pre className="code" aria-label="Example request">
          {ingestCurlExample(baseUrl)}
        </pre>
        <p className="text-sm">
          Claude Code, Codex CLI or Gemini CLI? They connect through their own hooks, with no code:{" "}
          <a href={`/w/${slug}/connect`}>Connect an agent</a> has their configuration ready to paste.
        </p>
        <p className="text-sm muted">
          Before each tool call, ask <span className="mono">guard.check</span> for a decision (allow / ask / deny / pause). Agents instrumented
          with OpenTelemetry can instead export to <span className="mono">{baseUrl}/api/otlp</span> with the same key.
        </p>
        {canConfigure && (
          <div>
            <ButtonLink href={`/w/${slug}/settings?tab=api-keys`} variant="primary" size="sm">
              <Icon name="plus" />
              Create an API key
            </ButtonLink>
          </div>
        )}
      </div>
    </section>
  );
}

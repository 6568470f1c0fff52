import { CopyValueButton } from "./copy-value-button";
import { failureKeyTail } from "./middle-ellipsis";
import { MiddleTruncate } from "./middle-truncate";

/**
 * Renders a failure key like `http_request|domain=api.example.com|path_prefix=v1`
 * with the tool name emphasised and parameter names muted. Monospace; without `wrap` one line,
 * middle-truncated on a real overflow (MiddleTruncate) with the last parameter kept. With `wrap`
 * the key breaks only between its `|` parts, never inside a tool name, a URL or any other
 * identifier; a part wider than the line alone is middle-truncated with an ellipsis (its whole
 * text in the tooltip; `copy` copies the whole key).
 */
export function FailureKey({ value, wrap = false, title, copy = false }: { value: string; wrap?: boolean; title?: string; copy?: boolean }) {
  if (!wrap) {
    // One line: whole when it fits, else "tool|…|args_hash=…" keeping the last parameter, which tells keys apart.
    return (
      <MiddleTruncate value={value} tail={failureKeyTail(value)} className="fkey-line" copy={copy} copyLabel="failure key">
        <KeyParts value={value} />
      </MiddleTruncate>
    );
  }
  const [tool, ...params] = value.split("|");
  return (
    <span className="fkey fkey-wrap" title={title ?? value}>
      <MiddleTruncate value={tool} className="fkey-part">
        <span className="fkey-tool">{tool}</span>
      </MiddleTruncate>
      {params.map((p, i) => (
        <MiddleTruncate key={i} value={`|${p}`} className="fkey-part">
          <Param text={p} />
        </MiddleTruncate>
      ))}
      {copy && <CopyValueButton value={value} label="failure key" />}
    </span>
  );
}

/** `|name=value` with the name muted. */
function Param({ text }: { text: string }) {
  const eq = text.indexOf("=");
  return (
    <>
      <span className="fkey-sep">|</span>
      {eq > 0 ? (
        <>
          <span className="fkey-k">{text.slice(0, eq + 1)}</span>
          {text.slice(eq + 1)}
        </>
      ) : (
        text
      )}
    </>
  );
}

/** The tool, then each `|name=value` with the name muted. */
function KeyParts({ value }: { value: string }) {
  const [tool, ...params] = value.split("|");
  return (
    <>
      <span className="fkey-tool">{tool}</span>
      {params.map((p, i) => (
        <span key={i}>
          <Param text={p} />
        </span>
      ))}
    </>
  );
}

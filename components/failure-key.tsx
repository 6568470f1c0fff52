import { failureKeyTail } from "./middle-ellipsis";
import { MiddleTruncate } from "./middle-truncate";

/**
 * Renders a failure key like `http_request|domain=api.example.com|path_prefix=v1`
 * with the tool name emphasised and parameter names muted. Monospace; without `wrap` one line,
 * middle-truncated on a real overflow (MiddleTruncate) with the last parameter kept. With `wrap` long keys break between parameters, then after a parameter's name.
 * A value stays whole on its line (a path never splits as "/shop/src/" + "billing" when it fits
 * a line of its own) and breaks inside only when it alone is wider than the line.
 */
export function FailureKey({ value, wrap = false, title, copy = false }: { value: string; wrap?: boolean; title?: string; copy?: boolean }) {
  if (!wrap) {
    // One line: whole when it fits, else "tool|…|args_hash=…" keeping the last parameter, which tells keys apart.
    return (
      <MiddleTruncate value={value} tail={failureKeyTail(value)} className="fkey-line" copy={copy} copyLabel="failure key">
        <KeyParts value={value} wrap={false} />
      </MiddleTruncate>
    );
  }
  return (
    <span className="fkey fkey-wrap" title={title ?? value}>
      <KeyParts value={value} wrap />
    </span>
  );
}

/** The tool, then each `|name=value` with the name muted. */
function KeyParts({ value, wrap }: { value: string; wrap: boolean }) {
  const [tool, ...params] = value.split("|");
  return (
    <>
      <span className="fkey-tool">{tool}</span>
      {params.map((p, i) => {
        const eq = p.indexOf("=");
        return (
          <span key={i}>
            <span className="fkey-sep">|</span>
            {eq > 0 ? (
              <>
                <span className="fkey-k">{p.slice(0, eq + 1)}</span>
                {/* A parameter too wide for its line breaks after its name, never inside a value that fits a line. */}
                {wrap && <wbr />}
                {p.slice(eq + 1)}
              </>
            ) : (
              p
            )}
          </span>
        );
      })}
    </>
  );
}

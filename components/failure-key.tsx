import { Fragment } from "react";

/**
 * Renders a failure key like `http_request|domain=api.example.com|path_prefix=v1`
 * with the tool name emphasised and parameter names muted. Monospace, no wrapping
 * unless `wrap` is set: long keys then break between parameters, then after a parameter's name,
 * then between path segments, and inside a value only when nothing else fits.
 */
export function FailureKey({ value, wrap = false, title }: { value: string; wrap?: boolean; title?: string }) {
  const [tool, ...params] = value.split("|");
  return (
    <span className={wrap ? "fkey fkey-wrap" : "fkey"} title={title ?? value}>
      <span className="fkey-tool">{tool}</span>
      {params.map((p, i) => {
        const eq = p.indexOf("=");
        return (
          <span key={i}>
            <span className="fkey-sep">|</span>
            {eq > 0 ? (
              <>
                <span className="fkey-k">{p.slice(0, eq + 1)}</span>
                {/* A parameter too wide for its line breaks after its name before it breaks inside its value. */}
                {wrap && <wbr />}
                {wrap ? withPathBreaks(p.slice(eq + 1)) : p.slice(eq + 1)}
              </>
            ) : (
              p
            )}
          </span>
        );
      })}
    </span>
  );
}

/** A value with a break opportunity after each `/`, so a wrapped path breaks between segments. */
function withPathBreaks(value: string): React.ReactNode {
  if (!value.includes("/")) return value;
  return value.split(/(?<=\/)/).map((part, i) => (
    <Fragment key={i}>
      {i > 0 && <wbr />}
      {part}
    </Fragment>
  ));
}

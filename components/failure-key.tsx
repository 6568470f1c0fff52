/**
 * Renders a failure key like `http_request|domain=api.example.com|path_prefix=v1`
 * with the tool name emphasised and parameter names muted. Monospace, no wrapping
 * unless `wrap` is set: long keys then break between parameters, then after a parameter's name.
 * A value stays whole on its line (a path never splits as "/shop/src/" + "billing" when it fits
 * a line of its own) and breaks inside only when it alone is wider than the line.
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
    </span>
  );
}


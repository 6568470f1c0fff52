"use client";

import { useState } from "react";
import { Icon } from "./icons";

/** A small icon button that copies `value` (an id, a key) to the clipboard and says so. */
export function CopyValueButton({ value, label = "value" }: { value: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="btn btn-ghost btn-xs btn-icon copy-value"
      aria-label={state === "copied" ? `Copied ${label}` : `Copy ${label}`}
      title={state === "failed" ? "Copy failed: select the text instead" : `Copy ${label}`}
      onClick={async (e) => {
        e.preventDefault();
        e.stopPropagation();
        try {
          await navigator.clipboard.writeText(value);
          setState("copied");
        } catch {
          setState("failed");
        }
        window.setTimeout(() => setState("idle"), 1500);
      }}
    >
      <Icon name={state === "copied" ? "check" : "copy"} size={12} />
    </button>
  );
}

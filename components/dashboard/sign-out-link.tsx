"use client";

import { useState } from "react";

/** Text-style sign-out (POST /api/auth/sign-out, then a full navigation to /sign-in). */
export function SignOutLink({ label = "Sign out" }: { label?: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="link-button"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        await fetch("/api/auth/sign-out", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).catch(() => {});
        window.location.assign("/sign-in");
      }}
    >
      {label}
    </button>
  );
}

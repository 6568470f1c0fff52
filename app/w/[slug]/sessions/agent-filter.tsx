"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { Select } from "@/components/form";

/** Agent filter of the sessions list: navigates with ?agent=… (server-side filtering). */
export function AgentFilter({ agents, value }: { agents: string[]; value: string | null }) {
  const router = useRouter();
  const pathname = usePathname();
  const sp = useSearchParams();
  return (
    <label className="row text-sm muted" style={{ gap: 6 }}>
      Agent
      <Select
        size="sm"
        value={value ?? ""}
        aria-label="Filter by agent"
        onChange={(e) => {
          const next = new URLSearchParams(sp.toString());
          if (e.target.value) next.set("agent", e.target.value);
          else next.delete("agent");
          next.delete("page");
          next.delete("after");
          next.delete("before");
          const q = next.toString();
          router.push(q ? `${pathname}?${q}` : pathname);
        }}
        options={[{ value: "", label: "All agents" }, ...agents.map((a) => ({ value: a, label: a }))]}
      />
    </label>
  );
}

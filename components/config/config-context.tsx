"use client";

/**
 * Shared state of the configuration editors (workspace settings tabs and organization defaults):
 * the stored snake_case document of the level being edited, the inherited level (organization
 * document when editing a workspace), and `save(next)` — validates the whole document on the client
 * with the engine's own parser (same rules as the server), then replaces the level through
 * `wsConfig.put` / `orgConfig.put`. Nothing partial is ever saved.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";
import { toast } from "@/components/toast";
import { errorIssues, useTRPC } from "@/lib/trpc/client";
import { parseConfigDocument, pathString, toCamelDocument, type ConfigIssue, type SnakeConfigDocument } from "@/server/engine/config";
import type { ConfigDocument } from "@/server/engine/types";

export type ConfigLevel = "workspace" | "organization";
export type ConfigScope = { level: "workspace"; workspaceSlug: string } | { level: "organization"; organizationId: string };

export type SaveResult = { ok: true; document: SnakeConfigDocument } | { ok: false; issues: ConfigIssue[]; message: string };

interface ConfigEditorValue {
  scope: ConfigScope;
  level: ConfigLevel;
  /** The stored document of this level (snake_case). */
  doc: SnakeConfigDocument;
  /** camelCase views (for the engine's resolution helpers). */
  camel: ConfigDocument;
  /** The organization document when editing a workspace; null at organization level. */
  inherited: SnakeConfigDocument | null;
  inheritedCamel: ConfigDocument;
  canEdit: boolean;
  saving: boolean;
  save: (next: SnakeConfigDocument, opts?: { successMessage?: string }) => Promise<SaveResult>;
}

const Ctx = createContext<ConfigEditorValue | null>(null);

export function useConfigEditor(): ConfigEditorValue {
  const v = useContext(Ctx);
  if (!v) throw new Error("useConfigEditor must be used inside <ConfigEditorProvider>");
  return v;
}

/** Deep copy of a JSON document. */
export function cloneDoc<T>(d: T): T {
  return JSON.parse(JSON.stringify(d ?? {})) as T;
}

/** The server's field issues (`data.issues`, document paths) as the editors' ConfigIssues. */
function issuesFromError(err: unknown): { issues: ConfigIssue[]; message: string } {
  const message = (err as { message?: string } | null)?.message ?? "Could not save";
  const issues = errorIssues(err).map((i) => {
    // Paths are document paths; "document" is the procedure's input field around the document.
    const segments = i.path[0] === "document" ? i.path.slice(1) : i.path;
    // Digits are list indexes in the document (extractors[0], security_patterns[2]).
    return { path: pathString(segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s))), segments, message: i.message, code: i.code };
  });
  return { issues, message };
}

export function ConfigEditorProvider({
  scope,
  initialDocument,
  inheritedDocument,
  canEdit,
  children,
}: {
  scope: ConfigScope;
  initialDocument: SnakeConfigDocument;
  inheritedDocument: SnakeConfigDocument | null;
  canEdit: boolean;
  children: ReactNode;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [doc, setDoc] = useState<SnakeConfigDocument>(initialDocument);
  const wsPut = useMutation(trpc.wsConfig.put.mutationOptions());
  const orgPut = useMutation(trpc.orgConfig.put.mutationOptions());

  const save = useCallback<ConfigEditorValue["save"]>(
    async (next, opts) => {
      const parsed = parseConfigDocument(next);
      if (!parsed.ok) return { ok: false, issues: parsed.issues, message: "Fix the highlighted fields first; nothing was saved." };
      try {
        const res =
          scope.level === "workspace"
            ? await wsPut.mutateAsync({ workspaceSlug: scope.workspaceSlug, document: next })
            : await orgPut.mutateAsync({ organizationId: scope.organizationId, document: next });
        setDoc(res.document as SnakeConfigDocument);
        void queryClient.invalidateQueries(scope.level === "workspace" ? trpc.wsConfig.pathFilter() : trpc.orgConfig.pathFilter());
        toast.success(opts?.successMessage ?? "Configuration saved");
        router.refresh();
        return { ok: true, document: res.document as SnakeConfigDocument };
      } catch (err) {
        const { issues, message } = issuesFromError(err);
        toast.error("Nothing was saved", message);
        return { ok: false, issues, message };
      }
    },
    [scope, wsPut, orgPut, router, queryClient, trpc],
  );

  const value = useMemo<ConfigEditorValue>(
    () => ({
      scope,
      level: scope.level,
      doc,
      camel: toCamelDocument(doc),
      inherited: inheritedDocument,
      inheritedCamel: inheritedDocument ? toCamelDocument(inheritedDocument) : {},
      canEdit,
      saving: wsPut.isPending || orgPut.isPending,
      save,
    }),
    [scope, doc, inheritedDocument, canEdit, wsPut.isPending, orgPut.isPending, save],
  );
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

/** Shown at the top of editors when the viewer cannot edit. */
export function ReadOnlyNotice() {
  const { canEdit, level } = useConfigEditor();
  if (canEdit) return null;
  return (
    <div className="callout" data-tone="info" role="note">
      <span>
        You can view this {level === "workspace" ? "workspace's" : "organization's"} configuration. Changing it needs the <strong>admin</strong> role.
      </span>
    </div>
  );
}

/** Issues whose path starts with `prefix`, keyed by the rest of the path. */
export function issuesUnder(issues: ConfigIssue[], prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of issues) {
    if (i.path === prefix || i.path.startsWith(prefix + ".") || i.path.startsWith(prefix + "[")) {
      const rest = i.path.slice(prefix.length).replace(/^\./, "");
      if (!(rest in out)) out[rest] = i.message;
    }
  }
  return out;
}

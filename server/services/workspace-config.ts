/**
 * Workspace / organization configuration documents (SPEC 6, 7.2): read, validated replace with
 * audit, the merged effective configuration and effective settings with their sources.
 *
 * Storage: `workspace.config` / `organization.config` hold the camelCase ConfigDocument. The
 * outside world (agent API `config.get`/`config.put`, dashboard import/export) speaks the seed's
 * snake_case document; `putConfigDocument` takes and returns that form.
 */
import { eq } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { organization, workspace } from "@/db/schema";
import { mergeEffectiveConfig, parseConfigDocument, toSnakeDocument, type ConfigIssue, type SnakeConfigDocument } from "@/server/engine/config";
import { resolveSettings, type SettingsLevel } from "@/server/engine/settings";
import type { ConfigDocument, EffectiveConfig, EffectiveSettings } from "@/server/engine/types";
import { writeAudit, type Actor } from "./audit";
import { ServiceError, notFound } from "./errors";

export type ConfigLevelRef = { level: "workspace"; workspaceId: string } | { level: "organization"; organizationId: string };

export type PutConfigInput =
  | { level: "workspace"; workspaceId: string; organizationId: string; document: unknown; actor: Actor }
  | { level: "organization"; organizationId: string; document: unknown; actor: Actor };

/** A 400 carrying every validation issue; `field` is the first issue's path (snake_case document path). */
class ConfigValidationError extends ServiceError {
  constructor(public readonly issues: ConfigIssue[]) {
    super(
      "BAD_REQUEST",
      `Invalid configuration document: ${issues.map((i) => (!i.path || i.message.includes(i.path) ? i.message : `${i.path}: ${i.message}`)).join("; ")}`,
      issues[0]?.path || undefined,
    );
    this.name = "ConfigValidationError";
  }
}

function asDocument(v: unknown): ConfigDocument {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as ConfigDocument) : {};
}

/** The stored (camelCase) document of one level; `{}` when nothing is set. */
export async function getConfigDocument(db: Db | Tx, ref: ConfigLevelRef): Promise<ConfigDocument> {
  if (ref.level === "workspace") {
    const [row] = await db.select({ config: workspace.config }).from(workspace).where(eq(workspace.id, ref.workspaceId));
    if (!row) throw notFound("Workspace");
    return asDocument(row.config);
  }
  const [row] = await db.select({ config: organization.config }).from(organization).where(eq(organization.id, ref.organizationId));
  if (!row) throw notFound("Organization");
  return asDocument(row.config);
}

/**
 * Validates a whole snake_case document and replaces the level with it (nothing is merged, nothing
 * partial is written). Invalid → ConfigValidationError (400, field path of the first issue, every
 * issue in the message). Writes an audit entry `config.put` with before/after (snake_case) in the
 * same transaction. Returns the stored document, snake_case.
 */
export async function putConfigDocument(db: Db, input: PutConfigInput): Promise<SnakeConfigDocument & { warnings?: ConfigWarning[] }> {
  const parsed = parseConfigDocument(input.document);
  if (!parsed.ok) throw new ConfigValidationError(parsed.issues);
  const doc = parsed.doc;
  // Fields accepted but not used as written (the seed's own settings): said in the answer, beside the stored document.
  const warnings = parsed.warnings?.map((w) => ({ path: (w.segments ?? [w.path]).map(String), message: w.message }));
  const stored = await db.transaction(async (tx) => {
    let before: ConfigDocument;
    let workspaceId: string | null = null;
    let target: string;
    if (input.level === "workspace") {
      const [row] = await tx
        .select({ config: workspace.config, slug: workspace.slug, organizationId: workspace.organizationId })
        .from(workspace)
        .where(eq(workspace.id, input.workspaceId))
        .for("update");
      if (!row || row.organizationId !== input.organizationId) throw notFound("Workspace");
      before = asDocument(row.config);
      await tx.update(workspace).set({ config: doc }).where(eq(workspace.id, input.workspaceId));
      workspaceId = input.workspaceId;
      target = `workspace:${row.slug}`;
    } else {
      const [row] = await tx
        .select({ config: organization.config, name: organization.name })
        .from(organization)
        .where(eq(organization.id, input.organizationId))
        .for("update");
      if (!row) throw notFound("Organization");
      before = asDocument(row.config);
      await tx.update(organization).set({ config: doc }).where(eq(organization.id, input.organizationId));
      target = `organization:${row.name}`;
    }
    const after = toSnakeDocument(doc);
    await writeAudit(tx, {
      organizationId: input.organizationId,
      workspaceId,
      actor: input.actor,
      action: "config.put",
      target,
      before: toSnakeDocument(before),
      after,
    });
    return after;
  });
  return warnings ? { ...stored, warnings } : stored;
}

/** A field of a stored document that was accepted but is not used as written. */
export interface ConfigWarning {
  path: string[];
  message: string;
}

/** Both levels' documents and their merge over the built-ins. */
export async function loadEffectiveConfig(
  db: Db | Tx,
  workspaceId: string,
): Promise<{ workspaceDoc: ConfigDocument; orgDoc: ConfigDocument; effective: EffectiveConfig }> {
  const [row] = await db
    .select({ ws: workspace.config, org: organization.config })
    .from(workspace)
    .innerJoin(organization, eq(organization.id, workspace.organizationId))
    .where(eq(workspace.id, workspaceId));
  if (!row) throw notFound("Workspace");
  const workspaceDoc = asDocument(row.ws);
  const orgDoc = asDocument(row.org);
  return { workspaceDoc, orgDoc, effective: mergeEffectiveConfig(workspaceDoc, orgDoc) };
}

/** Every setting's value and source: session (when given) > workspace > organization > default. */
export async function effectiveSettingsFor(
  db: Db | Tx,
  workspaceId: string,
  sessionOverrides?: SettingsLevel | Record<string, unknown> | null,
): Promise<EffectiveSettings> {
  const { workspaceDoc, orgDoc } = await loadEffectiveConfig(db, workspaceId);
  return resolveSettings((sessionOverrides ?? null) as SettingsLevel, workspaceDoc.settings ?? null, orgDoc.settings ?? null);
}

/** Organizations, workspaces and members. */
import { randomUUID } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { member, organization, user, workspace, type Role } from "@/db/schema";
import { writeAudit, type Actor } from "./audit";
import { badRequest, conflict, notFound } from "./errors";

export const WORKSPACE_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

export interface WorkspaceAccess {
  workspace: { id: string; slug: string; name: string; organizationId: string };
  organization: { id: string; name: string };
  role: Role;
}

export async function listMemberships(db: Db, userId: string) {
  return db
    .select({ organizationId: organization.id, organizationName: organization.name, role: member.role })
    .from(member)
    .innerJoin(organization, eq(organization.id, member.organizationId))
    .where(eq(member.userId, userId))
    .orderBy(asc(organization.createdAt));
}

/** The user's access to a workspace, or null when it does not exist or belongs to another organization (→ 404). */
export async function getWorkspaceAccess(db: Db, userId: string, slug: string): Promise<WorkspaceAccess | null> {
  const [row] = await db
    .select({
      id: workspace.id,
      slug: workspace.slug,
      name: workspace.name,
      organizationId: workspace.organizationId,
      organizationName: organization.name,
      role: member.role,
    })
    .from(workspace)
    .innerJoin(organization, eq(organization.id, workspace.organizationId))
    .innerJoin(member, and(eq(member.organizationId, workspace.organizationId), eq(member.userId, userId)))
    .where(eq(workspace.slug, slug));
  if (!row) return null;
  return {
    workspace: { id: row.id, slug: row.slug, name: row.name, organizationId: row.organizationId },
    organization: { id: row.organizationId, name: row.organizationName },
    role: row.role,
  };
}

export async function getMembership(db: Db, userId: string, organizationId: string) {
  const [row] = await db
    .select({ role: member.role, organizationName: organization.name })
    .from(member)
    .innerJoin(organization, eq(organization.id, member.organizationId))
    .where(and(eq(member.userId, userId), eq(member.organizationId, organizationId)));
  return row ?? null;
}

export async function listWorkspaces(db: Db, organizationId: string) {
  return db
    .select({ id: workspace.id, slug: workspace.slug, name: workspace.name, createdAt: workspace.createdAt })
    .from(workspace)
    .where(eq(workspace.organizationId, organizationId))
    .orderBy(asc(workspace.createdAt));
}

export function validateSlug(slug: string): void {
  if (!WORKSPACE_SLUG_PATTERN.test(slug)) {
    throw badRequest("Slug must be 2–63 characters: lowercase letters, digits and '-', starting with a letter or digit", "slug");
  }
}

export async function createWorkspace(
  db: Db | Tx,
  input: { organizationId: string; slug: string; name?: string; actor: Actor },
) {
  validateSlug(input.slug);
  const [existing] = await db.select({ id: workspace.id }).from(workspace).where(eq(workspace.slug, input.slug));
  if (existing) throw conflict(`A workspace with slug "${input.slug}" already exists`, "slug");
  const [row] = await db
    .insert(workspace)
    .values({ id: randomUUID(), organizationId: input.organizationId, slug: input.slug, name: input.name?.trim() || input.slug })
    .returning();
  await writeAudit(db, {
    organizationId: input.organizationId,
    workspaceId: row.id,
    actor: input.actor,
    action: "workspace.create",
    target: row.slug,
    after: { slug: row.slug, name: row.name },
  });
  return row;
}

export async function createOrganization(
  db: Db | Tx,
  input: { name: string; ownerUserId: string; actor: Actor; id?: string },
) {
  const name = input.name.trim();
  if (!name) throw badRequest("Organization name is required", "name");
  const [org] = await db.insert(organization).values({ id: input.id ?? randomUUID(), name }).returning();
  await db.insert(member).values({ organizationId: org.id, userId: input.ownerUserId, role: "owner" });
  await writeAudit(db, {
    organizationId: org.id,
    actor: input.actor,
    action: "organization.create",
    target: org.name,
    after: { name: org.name },
  });
  return org;
}

export async function listMembers(db: Db, organizationId: string) {
  return db
    .select({ userId: user.id, email: user.email, name: user.name, role: member.role, joinedAt: member.createdAt })
    .from(member)
    .innerJoin(user, eq(user.id, member.userId))
    .where(eq(member.organizationId, organizationId))
    .orderBy(asc(member.createdAt));
}

async function ownerCount(db: Db | Tx, organizationId: string) {
  const rows = await db
    .select({ userId: member.userId })
    .from(member)
    .where(and(eq(member.organizationId, organizationId), eq(member.role, "owner")));
  return rows.length;
}

export async function changeMemberRole(
  db: Db,
  input: { organizationId: string; userId: string; role: Role; actor: Actor },
) {
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select({ role: member.role, email: user.email })
      .from(member)
      .innerJoin(user, eq(user.id, member.userId))
      .where(and(eq(member.organizationId, input.organizationId), eq(member.userId, input.userId)))
      .for("update", { of: member });
    if (!m) throw notFound("Member");
    if (m.role === "owner" && input.role !== "owner" && (await ownerCount(tx, input.organizationId)) <= 1) {
      throw badRequest("An organization needs at least one owner", "role");
    }
    await tx
      .update(member)
      .set({ role: input.role })
      .where(and(eq(member.organizationId, input.organizationId), eq(member.userId, input.userId)));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      actor: input.actor,
      action: "member.role",
      target: m.email,
      before: { role: m.role },
      after: { role: input.role },
    });
  });
}

export async function removeMember(db: Db, input: { organizationId: string; userId: string; actor: Actor }) {
  return db.transaction(async (tx) => {
    const [m] = await tx
      .select({ role: member.role, email: user.email })
      .from(member)
      .innerJoin(user, eq(user.id, member.userId))
      .where(and(eq(member.organizationId, input.organizationId), eq(member.userId, input.userId)))
      .for("update", { of: member });
    if (!m) throw notFound("Member");
    if (m.role === "owner" && (await ownerCount(tx, input.organizationId)) <= 1) {
      throw badRequest("The last owner cannot be removed", "userId");
    }
    await tx.delete(member).where(and(eq(member.organizationId, input.organizationId), eq(member.userId, input.userId)));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      actor: input.actor,
      action: "member.remove",
      target: m.email,
      before: { role: m.role },
    });
  });
}

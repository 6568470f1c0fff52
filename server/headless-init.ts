/**
 * Headless initialization (SPEC 1): VIGIL_INIT_ORG / _WORKSPACE / _API_KEY / _USER_EMAIL / _USER_PASSWORD
 * create an organization, a workspace, an admin API key with exactly the given value and an owner.
 * Runs on every start and is idempotent: what exists already is left as it is.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apiKey, member, organization, user, workspace } from "@/db/schema";
import { MIN_PASSWORD_LENGTH, type Auth } from "./auth";
import { createApiKey, hashApiKey } from "./services/api-keys";
import { SYSTEM_ACTOR, writeAudit } from "./services/audit";
import { WORKSPACE_SLUG_PATTERN, createWorkspace, validateSlug } from "./services/tenancy";
import { randomUUID } from "node:crypto";

export interface HeadlessInitEnv {
  VIGIL_INIT_ORG?: string;
  VIGIL_INIT_WORKSPACE?: string;
  VIGIL_INIT_API_KEY?: string;
  VIGIL_INIT_USER_EMAIL?: string;
  VIGIL_INIT_USER_PASSWORD?: string;
}

class HeadlessInitError extends Error {}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Checks the VIGIL_INIT_* values before anything is opened, so a bad value stops start-up with a
 * message naming the variable (instead of a server that answers 500 to every request).
 * Returns one message per problem; empty when the values are usable (or none is set).
 */
export function headlessInitProblems(env: HeadlessInitEnv): string[] {
  const orgName = env.VIGIL_INIT_ORG?.trim();
  const slug = env.VIGIL_INIT_WORKSPACE?.trim();
  const keyValue = env.VIGIL_INIT_API_KEY?.trim();
  const email = env.VIGIL_INIT_USER_EMAIL?.trim();
  const password = env.VIGIL_INIT_USER_PASSWORD;
  if (!orgName && !slug && !keyValue && !email && !password) return [];
  const problems: string[] = [];
  if (!orgName) problems.push("VIGIL_INIT_ORG is required when any VIGIL_INIT_* variable is set");
  if (slug !== undefined && slug !== "" && !WORKSPACE_SLUG_PATTERN.test(slug)) {
    problems.push(`VIGIL_INIT_WORKSPACE "${slug}" is not a valid slug: 2–63 characters, lowercase letters, digits and '-', starting with a letter or digit`);
  }
  if (keyValue && !slug) problems.push("VIGIL_INIT_API_KEY needs VIGIL_INIT_WORKSPACE (the workspace the key belongs to)");
  if (keyValue && (!keyValue.startsWith("vgl_") || keyValue.length < 20)) problems.push("VIGIL_INIT_API_KEY must start with vgl_ and be at least 20 characters long");
  if (email && !EMAIL_PATTERN.test(email)) problems.push(`VIGIL_INIT_USER_EMAIL "${email}" is not an email address`);
  if (email && !password) problems.push("VIGIL_INIT_USER_PASSWORD is required with VIGIL_INIT_USER_EMAIL");
  if (password && !email) problems.push("VIGIL_INIT_USER_EMAIL is required with VIGIL_INIT_USER_PASSWORD");
  if (password && password.length < MIN_PASSWORD_LENGTH) problems.push(`VIGIL_INIT_USER_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`);
  return problems;
}

/** Throws a HeadlessInitError listing every problem of the VIGIL_INIT_* values. */
export function checkHeadlessInitEnv(env: HeadlessInitEnv): void {
  const problems = headlessInitProblems(env);
  if (problems.length) throw new HeadlessInitError(`Invalid headless init settings:\n  - ${problems.join("\n  - ")}`);
}

export async function applyHeadlessInit(db: Db, auth: Auth, env: HeadlessInitEnv): Promise<string[]> {
  const done: string[] = [];
  const orgName = env.VIGIL_INIT_ORG?.trim();
  const slug = env.VIGIL_INIT_WORKSPACE?.trim();
  const keyValue = env.VIGIL_INIT_API_KEY?.trim();
  const email = env.VIGIL_INIT_USER_EMAIL?.trim().toLowerCase();
  const password = env.VIGIL_INIT_USER_PASSWORD;
  checkHeadlessInitEnv(env);
  if (!orgName) return done;
  if (slug) validateSlug(slug);

  // Organization, by name.
  let [org] = await db.select().from(organization).where(eq(organization.name, orgName)).limit(1);
  if (!org) {
    [org] = await db.insert(organization).values({ id: randomUUID(), name: orgName }).returning();
    await writeAudit(db, { organizationId: org.id, actor: SYSTEM_ACTOR, action: "organization.create", target: orgName, after: { name: orgName } });
    done.push(`organization ${orgName}`);
  }

  // Owner user.
  if (email && password) {
    let [u] = await db.select().from(user).where(eq(user.email, email));
    if (!u) {
      await auth.api.signUpEmail({ body: { email, password, name: email.split("@")[0] } });
      [u] = await db.select().from(user).where(eq(user.email, email));
      done.push(`user ${email}`);
    }
    const [m] = await db
      .select()
      .from(member)
      .where(and(eq(member.organizationId, org.id), eq(member.userId, u.id)));
    if (!m) {
      await db.insert(member).values({ organizationId: org.id, userId: u.id, role: "owner" });
      await writeAudit(db, { organizationId: org.id, actor: SYSTEM_ACTOR, action: "member.add", target: email, after: { role: "owner" } });
    } else if (m.role !== "owner") {
      await db.update(member).set({ role: "owner" }).where(and(eq(member.organizationId, org.id), eq(member.userId, u.id)));
    }
  }

  // Workspace, by slug.
  let wsId: string | null = null;
  if (slug) {
    const [ws] = await db.select().from(workspace).where(eq(workspace.slug, slug));
    if (ws && ws.organizationId !== org.id) {
      throw new HeadlessInitError(`Workspace "${slug}" already belongs to another organization`);
    }
    wsId = ws?.id ?? (await createWorkspace(db, { organizationId: org.id, slug, actor: SYSTEM_ACTOR })).id;
    if (!ws) done.push(`workspace ${slug}`);
  }

  // API key with exactly the given value.
  if (keyValue && wsId) {
    const [existing] = await db.select().from(apiKey).where(eq(apiKey.hash, hashApiKey(keyValue)));
    if (existing && existing.workspaceId !== wsId) {
      throw new HeadlessInitError("VIGIL_INIT_API_KEY is already registered for another workspace");
    }
    if (!existing) {
      await createApiKey(db, { workspaceId: wsId, organizationId: org.id, name: "init", scope: "admin", actor: SYSTEM_ACTOR, value: keyValue });
      done.push("api key");
    }
  }
  return done;
}

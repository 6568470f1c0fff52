/**
 * Invitations by link: an organization admin or owner creates a link that lets one person join
 * the organization with a role before it expires. Only the SHA-256 of the link's token is stored,
 * so the link is shown once and a database leak yields no usable links.
 *
 * A link works once. A signed-in person accepts it directly (acceptInvitation). A signed-out person
 * signs up with it, even while sign-up is closed: better-auth's user-create hook claims the
 * invitation before the account is inserted (claimInvitationForSignUp, so two sign-ups cannot share
 * one link) and the after-hook adds the new user as a member (joinClaimedInvitation).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { and, asc, eq, gt, isNotNull, isNull } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { invitation, member, organization, type Role } from "@/db/schema";
import { writeAudit, type Actor } from "./audit";
import { isEmailAddress, sendInvitationEmail, smtpSettings, type InvitationEmailStatus } from "./invitation-email";
import { badRequest, conflict, forbidden, notFound, ServiceError } from "./errors";
import { hasRole } from "./roles";

export const INVITATION_DEFAULT_DAYS = 7;
export const INVITATION_MAX_DAYS = 30;
/** The header the invitation page's sign-up sends the link's token in. */
export const INVITATION_HEADER = "x-vigil-invitation";

export type InvitationStatus = "pending" | "expired" | "revoked" | "used" | "unknown";

const PROBLEMS: Record<Exclude<InvitationStatus, "pending">, { title: string; message: string }> = {
  expired: { title: "This invitation has expired", message: "Ask an admin of the organization for a new link." },
  revoked: { title: "This invitation was revoked", message: "Ask an admin of the organization for a new link." },
  used: { title: "This invitation has already been used", message: "A link works once. If it was you, sign in; otherwise ask for a new link." },
  unknown: { title: "This invitation link is not valid", message: "Check that you copied the whole link, or ask an admin of the organization for a new one." },
};

/** What to tell a person whose link cannot be used. */
export function invitationProblem(status: Exclude<InvitationStatus, "pending">) {
  return PROBLEMS[status];
}

export function hashInvitationToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

const pending = (now: Date) => and(isNull(invitation.acceptedAt), isNull(invitation.revokedAt), gt(invitation.expiresAt, now));

export async function createInvitation(
  db: Db,
  input: {
    organizationId: string;
    role: Role;
    expiresInDays?: number;
    inviterRole: Role;
    actor: Actor;
    now?: Date;
    /** Emails the link here when SMTP is configured (invitation-email.ts), after the commit. */
    email?: string;
    /** The dashboard's public origin, for the emailed link (`<baseUrl>/invite/<token>`). */
    baseUrl?: string;
  },
) {
  // An admin may invite up to admin; making someone an owner stays with owners (as changing roles does).
  if (!hasRole(input.inviterRole, input.role)) throw forbidden(`Only an owner can invite an ${input.role}`);
  const days = input.expiresInDays ?? INVITATION_DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > INVITATION_MAX_DAYS) {
    throw badRequest(`Expiry must be 1–${INVITATION_MAX_DAYS} days`, "expiresInDays");
  }
  const email = input.email?.trim() || undefined;
  if (email && !isEmailAddress(email)) throw badRequest("Enter one email address", "email");
  const smtp = email ? smtpSettings() : null;
  const now = input.now ?? new Date();
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(now.getTime() + days * 86_400_000);
  const id = randomUUID();
  const created = await db.transaction(async (tx) => {
    await tx.insert(invitation).values({
      id,
      organizationId: input.organizationId,
      tokenHash: hashInvitationToken(token),
      role: input.role,
      createdBy: input.actor.id,
      createdByLabel: input.actor.label,
      createdAt: now,
      expiresAt,
    });
    await writeAudit(tx, {
      organizationId: input.organizationId,
      actor: input.actor,
      action: "invitation.create",
      target: `invitation ${id.slice(0, 8)}`,
      after: { role: input.role, expiresAt: expiresAt.toISOString(), ...(email ? { email } : {}) },
    });
    // The organization's name for the email's subject, read before the commit (nothing can fail after it).
    const [org] = email ? await tx.select({ name: organization.name }).from(organization).where(eq(organization.id, input.organizationId)) : [];
    return { invitation: { id, token, role: input.role, expiresAt }, organizationName: org?.name ?? "an organization" };
  });
  // Committed: the link stands whatever the mail server does.
  let emailStatus: InvitationEmailStatus | null = null;
  if (email && !smtp) emailStatus = { sent: false, to: email, reason: "SMTP is not configured (VIGIL_SMTP_URL, VIGIL_SMTP_FROM)" };
  else if (email && smtp) {
    emailStatus = await sendInvitationEmail(smtp, {
      to: email,
      link: `${(input.baseUrl || process.env.VIGIL_BASE_URL || `http://localhost:${process.env.PORT || 3000}`).replace(/\/+$/, "")}/invite/${token}`,
      organizationName: created.organizationName,
      inviterLabel: input.actor.label,
      role: input.role,
      expiresAt,
    });
    await writeAudit(db, {
      organizationId: input.organizationId,
      actor: input.actor,
      action: emailStatus.sent ? "invitation.email" : "invitation.email_failed",
      target: `invitation ${id.slice(0, 8)}`,
      after: emailStatus,
    }).catch((err) => console.error("[invitations] could not audit the invitation email", err));
  }
  return { ...created.invitation, email: emailStatus };
}

/** Pending invitations of an organization, oldest first (never the token: only its hash is stored). */
export async function listPendingInvitations(db: Db, organizationId: string, now = new Date()) {
  return db
    .select({
      id: invitation.id,
      role: invitation.role,
      createdByLabel: invitation.createdByLabel,
      createdAt: invitation.createdAt,
      expiresAt: invitation.expiresAt,
    })
    .from(invitation)
    .where(and(eq(invitation.organizationId, organizationId), pending(now)))
    .orderBy(asc(invitation.createdAt));
}

export async function revokeInvitation(db: Db, input: { organizationId: string; invitationId: string; inviterRole: Role; actor: Actor; now?: Date }) {
  const now = input.now ?? new Date();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(invitation)
      .where(and(eq(invitation.organizationId, input.organizationId), eq(invitation.id, input.invitationId)))
      .for("update");
    if (!row) throw notFound("Invitation");
    const status = statusOf(row, now);
    if (status !== "pending") throw new ServiceError("CONFLICT", `${PROBLEMS[status].title}: nothing to revoke`, "invitationId");
    if (!hasRole(input.inviterRole, row.role)) throw forbidden(`Only an owner can revoke an invitation as ${row.role}`);
    await tx.update(invitation).set({ revokedAt: now }).where(eq(invitation.id, row.id));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      actor: input.actor,
      action: "invitation.revoke",
      target: `invitation ${row.id.slice(0, 8)}`,
      before: { role: row.role, expiresAt: row.expiresAt.toISOString() },
    });
  });
}

function statusOf(row: { acceptedAt: Date | null; revokedAt: Date | null; expiresAt: Date }, now: Date): InvitationStatus {
  if (row.acceptedAt) return "used";
  if (row.revokedAt) return "revoked";
  if (row.expiresAt.getTime() <= now.getTime()) return "expired";
  return "pending";
}

export interface InvitationView {
  status: InvitationStatus;
  organizationId?: string;
  organizationName?: string;
  role?: Role;
  expiresAt?: Date;
}

/** What a link leads to (read only): its organization and role when it can still be used. */
export async function inspectInvitation(db: Db | Tx, token: string, now = new Date()): Promise<InvitationView> {
  if (!token || token.length > 200) return { status: "unknown" };
  const [row] = await db
    .select({
      organizationId: invitation.organizationId,
      organizationName: organization.name,
      role: invitation.role,
      expiresAt: invitation.expiresAt,
      acceptedAt: invitation.acceptedAt,
      revokedAt: invitation.revokedAt,
    })
    .from(invitation)
    .innerJoin(organization, eq(organization.id, invitation.organizationId))
    .where(eq(invitation.tokenHash, hashInvitationToken(token)));
  if (!row) return { status: "unknown" };
  const status = statusOf(row, now);
  if (status !== "pending") return { status };
  return { status, organizationId: row.organizationId, organizationName: row.organizationName, role: row.role, expiresAt: row.expiresAt };
}

/**
 * Marks a pending invitation used, atomically (one conditional UPDATE), so a link admits one
 * person however many use it at once. Returns null when it is not pending.
 */
async function claim(db: Db | Tx, token: string, now: Date) {
  const [row] = await db
    .update(invitation)
    .set({ acceptedAt: now })
    .where(and(eq(invitation.tokenHash, hashInvitationToken(token)), pending(now)))
    .returning({ id: invitation.id, organizationId: invitation.organizationId, role: invitation.role });
  return row ?? null;
}

async function problemFor(db: Db | Tx, token: string, now: Date): Promise<ServiceError> {
  const { status } = await inspectInvitation(db, token, now);
  const p = PROBLEMS[status === "pending" ? "used" : status];
  return new ServiceError(status === "unknown" ? "NOT_FOUND" : "PRECONDITION_FAILED", `${p.title}. ${p.message}`, "token");
}

/** Sign-up with a link, before the user row exists: claims the invitation or explains why not. */
export async function claimInvitationForSignUp(db: Db, token: string, now = new Date()) {
  const claimed = await claim(db, token, now);
  if (!claimed) throw await problemFor(db, token, now);
  return claimed;
}

/** Sign-up with a link, once the user exists: the claimed invitation makes them a member. */
export async function joinClaimedInvitation(db: Db, token: string, newUser: { id: string; email: string }) {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .update(invitation)
      .set({ acceptedBy: newUser.id })
      .where(and(eq(invitation.tokenHash, hashInvitationToken(token)), isNotNull(invitation.acceptedAt), isNull(invitation.acceptedBy)))
      .returning({ id: invitation.id, organizationId: invitation.organizationId, role: invitation.role });
    if (!row) return;
    await addMember(tx, row, newUser);
  });
}

/** A signed-in person accepts a link: joins the organization with the invitation's role. */
export async function acceptInvitation(db: Db, input: { token: string; user: { id: string; email: string }; now?: Date }) {
  const now = input.now ?? new Date();
  return db.transaction(async (tx) => {
    const view = await inspectInvitation(tx, input.token, now);
    if (view.status === "pending" && view.organizationId) {
      const [already] = await tx
        .select({ role: member.role })
        .from(member)
        .where(and(eq(member.organizationId, view.organizationId), eq(member.userId, input.user.id)));
      // Leave the link for the person it was meant for.
      if (already) throw conflict(`You are already a member of ${view.organizationName} (${already.role})`, "token");
    }
    const claimed = await claim(tx, input.token, now);
    if (!claimed) throw await problemFor(tx, input.token, now);
    await tx.update(invitation).set({ acceptedBy: input.user.id }).where(eq(invitation.id, claimed.id));
    await addMember(tx, claimed, input.user);
    return { organizationId: claimed.organizationId, role: claimed.role };
  });
}

async function addMember(tx: Tx, inv: { id: string; organizationId: string; role: Role }, u: { id: string; email: string }) {
  await tx.insert(member).values({ organizationId: inv.organizationId, userId: u.id, role: inv.role }).onConflictDoNothing();
  await writeAudit(tx, {
    organizationId: inv.organizationId,
    actor: { type: "user", id: u.id, label: u.email },
    action: "invitation.accept",
    target: u.email,
    after: { role: inv.role, invitation: inv.id.slice(0, 8) },
  });
}

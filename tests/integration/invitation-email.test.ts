/**
 * Emailed invitations (server/services/invitation-email.ts): with VIGIL_SMTP_URL and VIGIL_SMTP_FROM
 * set, invitations.create also emails the link — here to a small SMTP receiver on a real socket,
 * which checks the conversation and keeps the message. A mail server that cannot be reached never
 * fails the invitation: it is created, its link returned and usable, and the answer says the email
 * was not sent and why. Without SMTP the answer is the link as before.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { auditLog, invitation } from "@/db/schema";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { hashInvitationToken, inspectInvitation } from "@/server/services/invitations";
import { createOrganization } from "@/server/services/tenancy";
import { closedPort, smtpReceiver } from "../support/smtp-receiver";

/** The decoded text of a MIME message (quoted-printable soft breaks and escapes undone). */
const decoded = (raw: string) => raw.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

describe.each(DATABASE_KINDS)("emailed invitations on %s", (kind) => {
  const app = useTestApp(kind);
  const saved = { url: process.env.VIGIL_SMTP_URL, from: process.env.VIGIL_SMTP_FROM, base: process.env.VIGIL_BASE_URL };
  let receiver: Awaited<ReturnType<typeof smtpReceiver>>;
  let organizationId: string;
  let owner: { userId: string; cookie: string };
  let ownerEmail: string;

  type Created = { id: string; token: string; role: string; email: { sent: boolean; to: string; reason?: string } | null };
  const invite = async (input: Record<string, unknown>) => {
    const res = await app.mutation("invitations.create", { organizationId, role: "member", ...input }, { cookie: owner.cookie });
    return res;
  };
  const created = async (input: Record<string, unknown>) => {
    const res = await invite(input);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data as Created;
  };

  beforeAll(async () => {
    delete process.env.VIGIL_BASE_URL;
    receiver = await smtpReceiver();
    ownerEmail = `owner-${uid()}@example.com`;
    owner = await app.signUp(ownerEmail);
    organizationId = (await createOrganization(app.db, { name: "Acme Robotics", ownerUserId: owner.userId, actor: SYSTEM_ACTOR })).id;
  });
  afterEach(() => {
    for (const [k, v] of [["VIGIL_SMTP_URL", saved.url], ["VIGIL_SMTP_FROM", saved.from]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  afterAll(async () => {
    await receiver.close();
    if (saved.base !== undefined) process.env.VIGIL_BASE_URL = saved.base;
  });

  it("emails the link through the SMTP server when VIGIL_SMTP_URL is set, and says so", async () => {
    process.env.VIGIL_SMTP_URL = `smtp://vigil:s%40cret@127.0.0.1:${receiver.port}`;
    process.env.VIGIL_SMTP_FROM = "Vigil <vigil@example.test>";
    const before = receiver.messages.length;
    const inv = await created({ email: "  new.person@example.com " });
    expect(inv.email).toEqual({ sent: true, to: "new.person@example.com" });

    expect(receiver.messages.length).toBe(before + 1);
    const msg = receiver.messages[before];
    expect(msg.auth).toBe("\u0000vigil\u0000s@cret");
    expect(msg.from).toBe("<vigil@example.test>");
    expect(msg.to).toEqual(["<new.person@example.com>"]);
    const text = decoded(msg.data);
    const link = `http://localhost/invite/${inv.token}`;
    expect(text).toMatch(/^Subject: .*Acme Robotics/m);
    expect(text).toMatch(new RegExp(`^Subject: ${ownerEmail.replace(/[.]/g, "\\.")} invited you`, "m"));
    expect(text).toContain("text/plain");
    expect(text).toContain("text/html");
    expect(text).toContain(`Accept the invitation: ${link}`);
    expect(text).toContain(`<a href="${link}">`);
    // The emailed link is the invitation's: pending, with its role.
    expect(await inspectInvitation(app.db, inv.token)).toMatchObject({ status: "pending", organizationId, role: "member" });

    const audit = await app.db.select().from(auditLog).where(and(eq(auditLog.organizationId, organizationId), eq(auditLog.target, `invitation ${inv.id.slice(0, 8)}`)));
    expect(audit.map((a) => [a.action, a.after])).toEqual(
      expect.arrayContaining([
        ["invitation.create", expect.objectContaining({ role: "member", email: "new.person@example.com" })],
        ["invitation.email", { sent: true, to: "new.person@example.com" }],
      ]),
    );
  });

  it("creates the invitation when the SMTP host cannot be reached, and says the email was not sent", async () => {
    process.env.VIGIL_SMTP_URL = `smtp://vigil:topsecret@127.0.0.1:${await closedPort()}`;
    process.env.VIGIL_SMTP_FROM = "vigil@example.test";
    const inv = await created({ email: "someone@example.com", role: "viewer" });
    expect(inv.email).toMatchObject({ sent: false, to: "someone@example.com", reason: expect.stringMatching(/ECONNREFUSED|connect/i) });
    expect(inv.email!.reason).not.toContain("topsecret");
    const [row] = await app.db.select().from(invitation).where(eq(invitation.tokenHash, hashInvitationToken(inv.token)));
    expect(row).toMatchObject({ id: inv.id, organizationId, role: "viewer", acceptedAt: null, revokedAt: null });
    expect((await inspectInvitation(app.db, inv.token)).status).toBe("pending");
    const [failed] = await app.db.select().from(auditLog).where(and(eq(auditLog.organizationId, organizationId), eq(auditLog.action, "invitation.email_failed")));
    expect(failed.after).toMatchObject({ sent: false, to: "someone@example.com" });
  });

  it("without SMTP, returns the link as before: no email, or a note that none can be sent", async () => {
    delete process.env.VIGIL_SMTP_URL;
    delete process.env.VIGIL_SMTP_FROM;
    const before = receiver.messages.length;
    const plain = await created({});
    expect(plain.email).toBeNull();
    expect(plain.token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const asked = await created({ email: "x@example.com" });
    expect(asked.email).toEqual({ sent: false, to: "x@example.com", reason: expect.stringContaining("SMTP is not configured") });
    // Only the URL set is not enough either.
    process.env.VIGIL_SMTP_URL = `smtp://127.0.0.1:${receiver.port}`;
    expect((await created({ email: "y@example.com" })).email).toMatchObject({ sent: false });
    expect(receiver.messages.length).toBe(before);
  });

  it("refuses a malformed address with a 400 naming email, and creates nothing", async () => {
    process.env.VIGIL_SMTP_URL = `smtp://127.0.0.1:${receiver.port}`;
    process.env.VIGIL_SMTP_FROM = "vigil@example.test";
    const count = async () => (await app.db.select({ id: invitation.id }).from(invitation).where(eq(invitation.organizationId, organizationId))).length;
    const n = await count();
    for (const email of ["not-an-address", "a@b.com, c@d.com", "Eve <eve@example.com>", "x".repeat(250) + "@example.com"]) {
      const res = await invite({ email });
      expect(res.status, email).toBe(400);
      const issues = (res.body as { error?: { data: { issues?: { path: string[] }[] } } }).error!.data.issues!;
      expect(issues.map((i) => i.path.join("."))).toEqual(["email"]);
    }
    expect(await count()).toBe(n);
  });
});

/**
 * Invitation emails: when `VIGIL_SMTP_URL` (smtp://user:pass@host:587, smtps:// for TLS from the
 * first byte) and `VIGIL_SMTP_FROM` are set, a new invitation's link is also emailed to the address
 * given. Sending never throws: the outcome is returned, so the invitation stands (its link is still
 * shown once) and the page says whether the email went.
 */
import { createTransport } from "nodemailer";

export interface SmtpSettings {
  url: string;
  from: string;
}

export type InvitationEmailStatus = { sent: true; to: string } | { sent: false; to: string; reason: string };

/** The SMTP settings, or null when either is missing (invitations are links only then). */
export function smtpSettings(env: NodeJS.ProcessEnv = process.env): SmtpSettings | null {
  const url = env.VIGIL_SMTP_URL?.trim();
  const from = env.VIGIL_SMTP_FROM?.trim();
  return url && from ? { url, from } : null;
}

/** A plausible single address (the SMTP server has the last word): no spaces, no angle brackets, one @. */
export function isEmailAddress(s: string): boolean {
  return s.length <= 254 && /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/.test(s);
}

const MAX_REASON = 200;
const ONE_LINE = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Why a send failed, in one line, without the URL's password. */
function reasonOf(err: unknown, settings: SmtpSettings): string {
  let text = err instanceof Error ? err.message : String(err);
  try {
    const pass = decodeURIComponent(new URL(settings.url).password);
    if (pass) text = text.split(pass).join("***");
  } catch {
    /* not a URL: nothing to hide */
  }
  text = ONE_LINE(text) || "the SMTP server refused the message";
  return text.length > MAX_REASON ? text.slice(0, MAX_REASON - 1) + "…" : text;
}

export interface InvitationEmail {
  to: string;
  link: string;
  organizationName: string;
  inviterLabel: string;
  role: string;
  expiresAt: Date;
}

/** The message: subject, plain text and a simple HTML part. */
function invitationMessage(m: InvitationEmail) {
  const org = ONE_LINE(m.organizationName);
  const inviter = ONE_LINE(m.inviterLabel);
  const expires = m.expiresAt.toUTCString();
  const subject = `${inviter} invited you to ${org} on Vigil`;
  const text = [
    `${inviter} invited you to join ${org} on Vigil as ${m.role}.`,
    "",
    `Accept the invitation: ${m.link}`,
    "",
    `The link works once and expires ${expires}. If you did not expect this email, ignore it.`,
  ].join("\n");
  const html = [
    `<p>${escapeHtml(inviter)} invited you to join <strong>${escapeHtml(org)}</strong> on Vigil as ${escapeHtml(m.role)}.</p>`,
    `<p><a href="${escapeHtml(m.link)}">Accept the invitation</a></p>`,
    `<p style="color:#666;font-size:13px">Or open this link: ${escapeHtml(m.link)}<br>It works once and expires ${escapeHtml(expires)}. If you did not expect this email, ignore it.</p>`,
  ].join("\n");
  return { subject, text, html };
}

/** Sends the invitation's link; resolves with the outcome, never rejects. */
export async function sendInvitationEmail(settings: SmtpSettings, email: InvitationEmail, opts: { timeoutMs?: number } = {}): Promise<InvitationEmailStatus> {
  const to = email.to;
  let url: URL;
  try {
    url = new URL(settings.url);
  } catch {
    return { sent: false, to, reason: "VIGIL_SMTP_URL is not a valid URL" };
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return { sent: false, to, reason: "VIGIL_SMTP_URL must start with smtp:// or smtps://" };
  const timeout = opts.timeoutMs ?? 10_000;
  const transport = createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : url.protocol === "smtps:" ? 465 : 587,
    secure: url.protocol === "smtps:",
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout * 2,
  });
  try {
    await transport.sendMail({ from: settings.from, to, ...invitationMessage(email) });
    return { sent: true, to };
  } catch (err) {
    return { sent: false, to, reason: reasonOf(err, settings) };
  } finally {
    transport.close();
  }
}

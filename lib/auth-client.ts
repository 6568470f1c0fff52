"use client";

/** better-auth browser client (same origin: /api/auth). Sign-up and sign-in forms use it. */
import { createAuthClient } from "better-auth/react";

export const authClient = createAuthClient();

/** Human message for a better-auth error ({ code, message, status }). */
export function authErrorMessage(error: { code?: string; message?: string; status?: number } | null | undefined): string {
  if (!error) return "";
  switch (error.code) {
    case "INVALID_EMAIL_OR_PASSWORD":
      return "Wrong email or password.";
    case "USER_ALREADY_EXISTS":
    case "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL":
    case "SIGNUP_FAILED":
      // Never confirm to a stranger that an email has an account.
      return "Could not create an account with these details. If you already have one, sign in instead.";
    case "SIGNUP_CLOSED":
      return error.message || "Sign-up is closed on this server. Ask an admin for an invitation.";
    case "PASSWORD_TOO_SHORT":
      return "Password must be at least 8 characters.";
    case "INVALID_EMAIL":
      return "Enter a valid email address.";
  }
  if (error.status === 429) return "Too many attempts. Wait a minute and try again.";
  if (error.status === 401) return "Wrong email or password.";
  return error.message || "Something went wrong. Try again.";
}

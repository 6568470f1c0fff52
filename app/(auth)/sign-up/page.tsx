import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getSessionUser } from "@/server/dashboard/access";
import { countUsers, homePathFor } from "@/server/dashboard/home";
import { getRuntime } from "@/server/runtime";
import { mayCreateUser } from "@/server/signup-policy";
import { SignUpClosed, SignUpForm } from "./sign-up-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign up" };

export default async function SignUpPage() {
  const user = await getSessionUser();
  if (user) {
    const home = await homePathFor(user);
    redirect(home);
  }
  // Said before the form, not after a refused submit (the policy itself is enforced in server/auth.ts).
  if (!(await mayCreateUser((await getRuntime()).database.db))) return <SignUpClosed />;
  return <SignUpForm firstUser={(await countUsers()) === 0} />;
}

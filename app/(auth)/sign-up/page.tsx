import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getSessionUser } from "@/server/dashboard/access";
import { countUsers, homePathFor } from "@/server/dashboard/home";
import { SignUpForm } from "./sign-up-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign up" };

export default async function SignUpPage() {
  const user = await getSessionUser();
  if (user) {
    const home = await homePathFor(user);
    redirect(home);
  }
  return <SignUpForm firstUser={(await countUsers()) === 0} />;
}

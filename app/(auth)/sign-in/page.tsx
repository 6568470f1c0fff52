import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getSessionUser } from "@/server/dashboard/access";
import { homePathFor } from "@/server/dashboard/home";
import { getRuntime } from "@/server/runtime";
import { mayCreateUser } from "@/server/signup-policy";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await getSessionUser();
  if (user) redirect(await homePathFor(user));
  const sp = await searchParams;
  const next = typeof sp.next === "string" ? sp.next : undefined;
  return <SignInForm next={next} signupOpen={await mayCreateUser((await getRuntime()).database.db)} />;
}

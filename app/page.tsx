import { redirect } from "next/navigation";
import { getSessionUser } from "@/server/dashboard/access";
import { countUsers, homePathFor } from "@/server/dashboard/home";

export const dynamic = "force-dynamic";

/** `/`: sign-up on a fresh installation, sign-in when signed out, else the first workspace. */
export default async function Home() {
  const user = await getSessionUser();
  if (!user) redirect((await countUsers()) === 0 ? "/sign-up" : "/sign-in");
  redirect(await homePathFor(user));
}

import { redirect } from "next/navigation";

export default function OrganizationIndex() {
  redirect("/org/workspaces");
}

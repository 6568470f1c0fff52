import { notFound } from "next/navigation";

/** Any unknown path inside a workspace: the workspace's not-found page, inside its navigation. */
export default function MissingWorkspacePage(): never {
  notFound();
}

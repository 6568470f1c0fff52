import type { Role } from "@/db/schema";

/** SPEC 1: owner (everything, members) > admin (settings, rules, API keys) > member (approve, reset, resume) > viewer. */
const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export function hasRole(role: Role, minimum: Role): boolean {
  return RANK[role] >= RANK[minimum];
}

/** What each role may do, for the UI to hide what it cannot (the server checks again). */
export function permissionsFor(role: Role) {
  return {
    canOperate: hasRole(role, "member"), // approve/deny, reset keys, resume sessions
    canConfigure: hasRole(role, "admin"), // settings, rules, API keys, workspaces
    canManageMembers: hasRole(role, "owner"),
  };
}
export type Permissions = ReturnType<typeof permissionsFor>;

/** The workspace (and its organization) a request of the agent API acts in. */
export interface BatchScope {
  workspaceId: string;
  organizationId: string;
}

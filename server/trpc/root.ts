import { router } from "./init";
import { accountRouter } from "./routers/account";
import { apiKeysRouter } from "./routers/api-keys";
import { organizationRouter } from "./routers/organization";
import { workspaceRouter } from "./routers/workspace";
import { configRouter } from "./routers/workspace-config";
import { orgConfigRouter } from "./routers/org-config";
import { notificationsRouter } from "./routers/notifications";
import { invitationsRouter } from "./routers/invitations";
import { orgPoliciesRouter, workspacePoliciesRouter } from "./routers/policies-dashboard";
import { agentsRouter, approvalsRouter, failuresRouter, modelsRouter, patternsRouter, policiesRouter, configRouter as agentConfigRouter, guardRouter, ingestRouter, keysRouter, reliabilityRouter, sessionsRouter, workspaceHoldsRouter } from "./routers/agent";

export const appRouter = router({
  // Agent API (SPEC 7) — fixed names.
  ingest: ingestRouter,
  guard: guardRouter,
  reliability: reliabilityRouter,
  config: agentConfigRouter,
  approvals: approvalsRouter,
  keys: keysRouter,
  sessions: sessionsRouter,
  agents: agentsRouter,
  workspace: workspaceHoldsRouter,
  policies: policiesRouter,
  patterns: patternsRouter,
  models: modelsRouter,
  failures: failuresRouter,
  // Dashboard.
  account: accountRouter,
  organization: organizationRouter,
  apiKeys: apiKeysRouter,
  ws: workspaceRouter,
  wsConfig: configRouter,
  orgConfig: orgConfigRouter,
  notifications: notificationsRouter,
  invitations: invitationsRouter,
  wsPolicies: workspacePoliciesRouter,
  orgPolicies: orgPoliciesRouter,
});

export type AppRouter = typeof appRouter;

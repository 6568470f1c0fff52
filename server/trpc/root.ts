import { router } from "./init";
import { accountRouter } from "./routers/account";
import { apiKeysRouter } from "./routers/api-keys";
import { organizationRouter } from "./routers/organization";

export const appRouter = router({
  account: accountRouter,
  organization: organizationRouter,
  apiKeys: apiKeysRouter,
});

export type AppRouter = typeof appRouter;

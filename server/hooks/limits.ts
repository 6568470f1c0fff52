/** Longest wait for a person a hook may ask for (SPEC 7.2: `waitForApprovalSeconds` 0–120). Shared with the Connect page. */
export const MAX_WAIT_SECONDS = 120;

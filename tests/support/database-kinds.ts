/**
 * Which databases the integration suites run on: VIGIL_TEST_DATABASES (comma-separated, default
 * `pglite,postgres`). `citus` (a throwaway coordinator and two workers) is selected by the Citus
 * step of `npm test`. No vitest import here: the global setup reads it too.
 */
export const ALL_DATABASE_KINDS = ["pglite", "postgres", "citus"] as const;
export type DatabaseKind = (typeof ALL_DATABASE_KINDS)[number];

export function selectedDatabaseKinds(env = process.env): DatabaseKind[] {
  const names = (env.VIGIL_TEST_DATABASES ?? "pglite,postgres").split(",").map((s) => s.trim()).filter(Boolean);
  for (const n of names)
    if (!(ALL_DATABASE_KINDS as readonly string[]).includes(n)) throw new Error(`VIGIL_TEST_DATABASES: unknown kind '${n}' (${ALL_DATABASE_KINDS.join(", ")})`);
  return names as DatabaseKind[];
}

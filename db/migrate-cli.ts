/**
 * `npm run migrate` — applies the committed migrations to the configured database and exits
 * (DATABASE_URL, else PGlite in VIGIL_DATA_DIR). The server also migrates on start; this is for
 * deploy pipelines that migrate before rolling out new instances. Stop a PGlite server first:
 * an embedded data directory can be open in one process only.
 */
import { databaseOptionsFromEnv, migrateDatabase, openDatabase } from "./client";

const options = databaseOptionsFromEnv();
const database = await openDatabase(options);
try {
  await migrateDatabase(database);
  console.log(`[vigil] migrations applied (${database.kind}${options.dataDir ? ` in ${options.dataDir}` : ""})`);
} finally {
  await database.close();
}

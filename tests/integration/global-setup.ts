import type { TestProject } from "vitest/node";
import postgres from "postgres";
import { startPgCluster } from "../support/pg-cluster";
import { startCitusCluster } from "../support/citus-cluster";
import { selectedDatabaseKinds } from "../support/database-kinds";
import { migrateDatabase, openDatabase } from "../../db/client";

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the throwaway cluster (database `postgres`). */
    pgAdminUrl: string;
    /** Admin URLs of the throwaway Citus coordinator and workers (when `citus` is selected). */
    citusCluster: { coordinatorUrl: string; workerUrls: string[] };
  }
}

export const TEMPLATE_DB = "vigil_template";

/**
 * Starts the throwaway cluster and migrates a template database each test file clones; starts a
 * Citus cluster instead when only `citus` is selected (VIGIL_TEST_DATABASES).
 */
export default async function setup(project: TestProject) {
  const kinds = selectedDatabaseKinds();
  const citus = kinds.includes("citus") ? await startCitusCluster() : null;
  if (citus) project.provide("citusCluster", { coordinatorUrl: citus.coordinatorUrl, workerUrls: citus.workerUrls });
  if (!kinds.includes("postgres")) return () => citus?.stop();
  const external = process.env.VIGIL_TEST_DATABASE_URL;
  const cluster = external ? null : await startPgCluster();
  const adminUrl = external ?? cluster!.url;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${TEMPLATE_DB}`);
  await admin.unsafe(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${TEMPLATE_DB}`;
  const db = await openDatabase({ url: templateUrl.toString(), poolSize: 1 });
  await migrateDatabase(db);
  await db.close();
  project.provide("pgAdminUrl", adminUrl);
  return () => {
    cluster?.stop();
    citus?.stop();
  };
}

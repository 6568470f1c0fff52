/**
 * A DATABASE_URL naming a Unix-domain socket directory (`?host=/dir`, libpq's way) reaches the
 * server over that socket, migrations included — against a cluster of its own, whose socket
 * directory is known.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase, openDatabase } from "@/db/client";
import { startPgCluster, type PgCluster } from "../support/pg-cluster";
import { DATABASE_KINDS } from "../support/databases";

describe.runIf(DATABASE_KINDS.includes("postgres"))("DATABASE_URL with ?host=<socket directory>", () => {
  let cluster: PgCluster;
  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());

  it("migrates and queries over the Unix-domain socket, passing the other parameters on", async () => {
    const database = await openDatabase({ url: `${cluster.url}?host=${encodeURIComponent(cluster.socketDir)}&application_name=vigil-socket-test`, poolSize: 2 });
    try {
      await migrateDatabase(database);
      const [row] = await database.pg!`select inet_server_addr() is null as over_socket, current_setting('application_name') as app, (select count(*)::int from workspace) as workspaces`;
      expect(row).toEqual({ over_socket: true, app: "vigil-socket-test", workspaces: 0 });
    } finally {
      await database.close();
    }
  });

  it("still uses TCP for the plain URL", async () => {
    const database = await openDatabase({ url: cluster.url, poolSize: 1 });
    try {
      const [row] = await database.pg!`select inet_server_addr() is null as over_socket`;
      expect(row.over_socket).toBe(false);
    } finally {
      await database.close();
    }
  });
});

/**
 * A throwaway PostgreSQL cluster for a test run (Debian's server binaries), started and stopped by
 * the run. initdb/pg_ctl refuse to run as root, so as root they run as the `postgres` user.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";

export interface PgCluster {
  url: string;
  /** The directory of the server's Unix-domain socket (`?host=` of a libpq URL). */
  socketDir: string;
  /** The running postmaster's process id (its backends are its children). */
  serverPid(): number;
  stop(): void;
  /** Stops the server (fast shutdown), keeping the data, to see how clients fare without it. */
  halt(): void;
  /** Starts the halted server again on the same port. */
  resume(): void;
}

function findBinDir(): string {
  const base = "/usr/lib/postgresql";
  const versions = fs.existsSync(base) ? fs.readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const dir = path.join(base, v, "bin");
    if (fs.existsSync(path.join(dir, "initdb"))) return dir;
  }
  throw new Error("PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install -y postgresql)");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

export interface PgClusterOptions {
  /** fsync and synchronous commit on, as in production (benchmarks); tests run without. */
  durable?: boolean;
  /** Extra server settings (`-c name=value`), e.g. `shared_preload_libraries: "citus"`. */
  settings?: Record<string, string>;
}

export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = findBinDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-pg-"));
  const dataDir = path.join(dir, "data");
  const isRoot = process.getuid?.() === 0;
  fs.mkdirSync(dataDir, { mode: 0o700 });
  if (isRoot) {
    execFileSync("chown", ["-R", "postgres:postgres", dir]);
  }
  const run = (cmd: string, args: string[]) =>
    isRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args], { stdio: "pipe" })
      : execFileSync(path.join(bin, cmd), args, { stdio: "pipe" });
  const port = await freePort();
  const extra = Object.entries(options.settings ?? {})
    .map(([k, v]) => ` -c ${k}=${v}`)
    .join("");
  run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  const start = () =>
    run("pg_ctl", [
      "-D",
      dataDir,
      "-l",
      path.join(dir, "log"),
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200` +
        (options.durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off") +
        extra,
      "-w",
      "start",
    ]);
  start();
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    socketDir: dir,
    serverPid: () => Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]),
    halt: () => run("pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "stop"]),
    resume: start,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

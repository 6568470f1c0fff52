/**
 * @vigil/sdk as users get it: `npm pack` of packages/sdk installed into a scratch project, and the
 * agent API behind a real HTTP server for it to talk to. Shared by the SDK's integration suites.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { handleTrpcRequest } from "@/server/agent-api/trpc";
import { afterAll, beforeAll } from "vitest";
import type { Runtime } from "@/server/runtime";

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * Packs packages/sdk and installs the tarball into a new project. `peers` are linked from the
 * repository's node_modules (npm would fetch them from the registry); `entries` maps a name to the
 * module specifier imported from inside the project.
 */
export async function installPackedSdk<E extends Record<string, unknown>>(options: { peers: string[]; entries: Record<keyof E & string, string> }) {
  const dir = await mkdtemp(path.join(tmpdir(), "vigil-sdk-"));
  const packDir = path.join(dir, "pack");
  await mkdir(packDir);
  // prepack builds dist/ with tsc; the tarball holds what `files` lists.
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", packDir], { cwd: path.join(ROOT, "packages/sdk") });
  const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf("[")));
  const project = path.join(dir, "app");
  await mkdir(project);
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "scratch-agent", private: true, type: "module" }));
  await run("npm", ["install", path.join(packDir, filename), "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: project });
  for (const peer of options.peers) {
    const target = path.join(project, "node_modules", peer);
    await mkdir(path.dirname(target), { recursive: true });
    await symlink(path.join(ROOT, "node_modules", peer), target, "dir");
  }
  const source = Object.entries(options.entries).map(([name, specifier]) => `export * as ${name} from ${JSON.stringify(specifier)};`).join("\n");
  await writeFile(path.join(project, "entry.mjs"), `${source}\n`);
  const entry = (await import(/* @vite-ignore */ pathToFileURL(path.join(project, "entry.mjs")).href)) as E;
  return { dir, project, tarball: filename as string, bin: path.join(project, "node_modules/@vigil/sdk/bin/vigil.js"), ...entry };
}

/**
 * A suite's packed SDK and the agent API it talks to: installed and served before the suite's tests,
 * closed and removed after them. Read `sdk` and `api` inside tests.
 */
export function usePackedSdk<E extends Record<string, unknown>>(app: { runtime: Runtime }, options: { peers: string[]; entries: Record<keyof E & string, string> }) {
  let sdk: Awaited<ReturnType<typeof installPackedSdk<E>>> | undefined;
  let api: Awaited<ReturnType<typeof serveAgentApi>> | undefined;
  beforeAll(async () => {
    [sdk, api] = await Promise.all([installPackedSdk<E>(options), serveAgentApi(app.runtime)]);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (sdk) await rm(sdk.dir, { recursive: true, force: true });
  });
  return {
    get sdk() {
      return sdk!;
    },
    get api() {
      return api!;
    },
  };
}

/** The agent API over HTTP (what `next start` serves at /api/trpc). Under /busy/ the first request is answered 429 with Retry-After: 1, as Vigil's rate limit answers. */
export async function serveAgentApi(runtime: Runtime) {
  let busyAnswered = 0;
  const busyRequests: number[] = [];
  const server = http.createServer(async (req, res) => {
    let url = req.url ?? "/";
    if (url.startsWith("/busy/")) {
      busyRequests.push(Date.now());
      url = url.slice("/busy".length);
      if (busyAnswered++ === 0) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
        res.end(JSON.stringify({ error: { message: "Rate limit exceeded; retry in 1s", code: -32029, data: { code: "TOO_MANY_REQUESTS", httpStatus: 429 } } }));
        return;
      }
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    const response = await handleTrpcRequest(
      new Request(`http://localhost${url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined }),
      runtime,
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, busyRequests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** An error carrying an HTTP status, as fetch wrappers throw. */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

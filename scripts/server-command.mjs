/**
 * How every launcher starts the production server — `npm start`, the e2e server, the bench and the
 * hardening trials — so all of them run it with the same Node flags.
 *
 * `--max-semi-space-size=64` (MiB per semi-space; Node 20 grows it to 16 at most): under a fleet's
 * load, requests and batches in flight keep their objects alive across young-generation
 * collections, and each collection copies what is still alive. Collecting a quarter as often took
 * ~25 % off the server CPU of a guard.check at 64 concurrent sessions and brought 500/s offered from
 * p99 19–32 ms to ~16 ms; the young generation only grows that large under such load, and peak RSS
 * at 2,000/s offered went from ~240 to ~320 MiB. A `--max-semi-space-size` in NODE_OPTIONS wins.
 */
export function serverNodeFlags(nodeOptions = process.env.NODE_OPTIONS ?? "") {
  return nodeOptions.includes("--max-semi-space-size") ? [] : ["--max-semi-space-size=64"];
}

/** The arguments after `node` that serve the build on `port` and `host`. */
export function serverArgs(port, host, nodeOptions) {
  return [...serverNodeFlags(nodeOptions), "scripts/serve.mjs", "-p", String(port), "-H", host];
}

/**
 * How every launcher starts the production server — `npm start`, the e2e server, the bench and the
 * hardening trials — so all of them run it with the same Node flags.
 *
 * `--max-semi-space-size=32` (MiB per semi-space; Node 20 grows it to 16 at most): under a fleet's
 * load, requests and batches in flight keep their objects alive across young-generation
 * collections, and each collection copies what is still alive. At Node's 16 a guard.check at 64
 * concurrent sessions spent ~25 % more server CPU and 500/s offered had a p99 of 19–32 ms. 32 and
 * 64 cost the same CPU per check (median ~195 against ~200 µs over 8 rounds each) and per ingested
 * event, with the same 500/s p99, while 64 took peak RSS at 2,000/s offered to 373–408 MiB and 32
 * to 322–332 (docs/performance.md, "Serving"). A `--max-semi-space-size` in NODE_OPTIONS wins.
 */
export function serverNodeFlags(nodeOptions = process.env.NODE_OPTIONS ?? "") {
  return nodeOptions.includes("--max-semi-space-size") ? [] : ["--max-semi-space-size=32"];
}

/** The arguments after `node` that serve the build on `port` and `host`. */
export function serverArgs(port, host, nodeOptions) {
  return [...serverNodeFlags(nodeOptions), "scripts/serve.mjs", "-p", String(port), "-H", host];
}

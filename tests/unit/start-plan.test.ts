import { describe, expect, it } from "vitest";
// @ts-expect-error — a plain ESM script without types
import { installStamp, lockfileHash, needsBuild, needsInstall } from "../../scripts/start-plan.mjs";

describe("npm start decides what to do before serving", () => {
  const lockHash = lockfileHash("lockfile v1");

  it("installs on a fresh clone, then never again for the same lockfile", () => {
    expect(needsInstall({ hasNodeModules: false, stamp: null, lockHash, production: false })).toBe(true);
    expect(needsInstall({ hasNodeModules: true, stamp: installStamp(lockHash, false), lockHash, production: false })).toBe(false);
  });

  it("reinstalls when the lockfile changed, when node_modules came from elsewhere, or when production-ness changed", () => {
    expect(needsInstall({ hasNodeModules: true, stamp: installStamp(lockfileHash("lockfile v0"), false), lockHash, production: false })).toBe(true);
    expect(needsInstall({ hasNodeModules: true, stamp: null, lockHash, production: false })).toBe(true);
    expect(needsInstall({ hasNodeModules: true, stamp: installStamp(lockHash, false), lockHash, production: true })).toBe(true);
  });

  it("builds when there is no build or a source is newer; a restart with nothing changed does not build", () => {
    expect(needsBuild({ builtAt: 0, changedAt: 100, skip: false })).toBe(true);
    expect(needsBuild({ builtAt: 200, changedAt: 100, skip: false })).toBe(false);
    expect(needsBuild({ builtAt: 200, changedAt: 300, skip: false })).toBe(true);
    expect(needsBuild({ builtAt: 0, changedAt: 300, skip: true })).toBe(false);
  });
});

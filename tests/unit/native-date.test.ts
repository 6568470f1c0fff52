import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

/** Runs `body` in a fresh Node process after Next's environment is loaded (it patches globals). */
function inNextEnvironment(body: string): Record<string, unknown> {
  const script = `
    import { createRequire } from "node:module";
    import { captureNativeDate, restoreNativeDate } from ${JSON.stringify(path.join(root, "scripts/native-date.mjs"))};
    const require = createRequire(${JSON.stringify(path.join(root, "package.json"))});
    const native = captureNativeDate();
    require("next/dist/server/node-environment.js");
    const patched = globalThis.Date;
    const madeByWrapper = new Date(0);
    ${body}
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
}

describe("the native Date under Next (scripts/native-date.mjs)", () => {
  it("Next replaces the global Date; restoring puts the native one back, constructor included, and Dates of either stay Dates", () => {
    const out = inNextEnvironment(`
      const restored = restoreNativeDate(native, {});
      console.log(JSON.stringify({
        patchedByNext: patched !== native,
        restored,
        isNative: globalThis.Date === native,
        constructorIsNative: new Date(0).constructor === native,
        wrapperDateIsDate: madeByWrapper instanceof Date,
        sameTime: new Date(1795162080000).toISOString() === "2026-11-20T08:08:00.000Z",
        again: restoreNativeDate(native, {}),
      }));
    `);
    expect(out).toEqual({ patchedByNext: true, restored: true, isNative: true, constructorIsNative: true, wrapperDateIsDate: true, sameTime: true, again: false });
  });

  it("leaves Next's Date in place when the app enables cacheComponents (its prerenders read the clock through it)", () => {
    const out = inNextEnvironment(`
      console.log(JSON.stringify({ restored: restoreNativeDate(native, { cacheComponents: true }), stillPatched: globalThis.Date === patched && patched !== native }));
    `);
    expect(out).toEqual({ restored: false, stillPatched: true });
  });
});

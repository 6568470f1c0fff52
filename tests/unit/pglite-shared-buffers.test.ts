/** VIGIL_PGLITE_SHARED_BUFFERS: PGlite's buffer pool, checked at start-up with a message naming the setting. */
import { describe, expect, it } from "vitest";
import { DEFAULT_PGLITE_SHARED_BUFFERS, pgliteSharedBuffersFromEnv, pgliteStartSettings } from "@/db/pglite-data-dir";

describe("pgliteSharedBuffersFromEnv", () => {
  it("defaults to 32MB when unset or blank", () => {
    expect(DEFAULT_PGLITE_SHARED_BUFFERS).toBe("32MB");
    expect(pgliteSharedBuffersFromEnv(undefined)).toBe("32MB");
    expect(pgliteSharedBuffersFromEnv("  ")).toBe("32MB");
  });

  it("takes sizes from 1MB to 1GB in kB, MB or GB", () => {
    expect(pgliteSharedBuffersFromEnv("128MB")).toBe("128MB");
    expect(pgliteSharedBuffersFromEnv(" 1GB ")).toBe("1GB");
    expect(pgliteSharedBuffersFromEnv("1024kB")).toBe("1024kB");
    expect(pgliteStartSettings("64MB").slice(0, 2)).toEqual(["-c", "shared_buffers=64MB"]);
  });

  it.each(["32", "32mb", "32 M", "512kB", "2GB", "-1MB", "1.5GB", "lots"])("refuses %j, naming the setting", (raw) => {
    expect(() => pgliteSharedBuffersFromEnv(raw)).toThrow(/VIGIL_PGLITE_SHARED_BUFFERS must be a size from 1MB to 1GB .* got "/);
  });
});

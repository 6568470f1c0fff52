import { describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { RowVersionCache } from "@/server/ingest/row-version-cache";

// A database handle is only a key here (state hangs off its client): any object will do.
const handle = () => ({}) as unknown as Db;

describe("row version cache", () => {
  it("keeps one document per workspace and row, under the version given last", () => {
    const cache = new RowVersionCache<{ n: number }>(10);
    const db = handle();
    cache.remember(db, "ws1", "s1", "100", { n: 1 });
    cache.remember(db, "ws2", "s1", "200", { n: 2 });
    expect(cache.get(db, "ws1", "s1")).toEqual({ version: "100", value: { n: 1 } });
    expect(cache.get(db, "ws2", "s1")).toEqual({ version: "200", value: { n: 2 } });
    cache.remember(db, "ws1", "s1", "101", { n: 3 });
    expect(cache.get(db, "ws1", "s1")).toEqual({ version: "101", value: { n: 3 } });
    // Another database (another client) has its own.
    expect(cache.get(handle(), "ws1", "s1")).toBeUndefined();
  });

  it("is bounded: beyond its size the row used least recently goes first", () => {
    const cache = new RowVersionCache<number>(100);
    const db = handle();
    for (let i = 0; i < 100; i++) cache.remember(db, "ws", `s${i}`, "1", i);
    cache.remember(db, "ws", "s0", "2", 0); // used again: now the most recent
    cache.remember(db, "ws", "new", "1", 100);
    expect(cache.get(db, "ws", "s1")).toBeUndefined();
    expect(cache.get(db, "ws", "s0")?.version).toBe("2");
    expect(cache.get(db, "ws", "s2")).toBeDefined();
    expect(cache.get(db, "ws", "new")).toBeDefined();
  });
});

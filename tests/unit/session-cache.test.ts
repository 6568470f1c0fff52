import { describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { createSessionBehaviour } from "@/server/engine/behaviour-state";
import { cachedBehaviour, MAX_SESSIONS, rememberBehaviour } from "@/server/ingest/session-cache";

// A database handle is only a key here (state hangs off its client): any object will do.
const handle = () => ({}) as unknown as Db;

describe("session behaviour cache", () => {
  it("keeps one document per workspace and session, under the version written last", () => {
    const db = handle();
    const a = createSessionBehaviour("s1");
    const b = { ...a, seq: 7 };
    rememberBehaviour(db, "ws1", "s1", "100", a);
    rememberBehaviour(db, "ws2", "s1", "200", b);
    expect(cachedBehaviour(db, "ws1", "s1")).toEqual({ version: "100", behaviour: a });
    expect(cachedBehaviour(db, "ws2", "s1")).toEqual({ version: "200", behaviour: b });
    rememberBehaviour(db, "ws1", "s1", "101", b);
    expect(cachedBehaviour(db, "ws1", "s1")).toEqual({ version: "101", behaviour: b });
    // Another database (another client) has its own.
    expect(cachedBehaviour(handle(), "ws1", "s1")).toBeUndefined();
  });

  it("is bounded: beyond MAX_SESSIONS the session used least recently goes first", () => {
    const db = handle();
    const doc = createSessionBehaviour("s");
    for (let i = 0; i < MAX_SESSIONS; i++) rememberBehaviour(db, "ws", `s${i}`, "1", doc);
    rememberBehaviour(db, "ws", "s0", "2", doc); // used again: now the most recent
    rememberBehaviour(db, "ws", "new", "1", doc);
    expect(cachedBehaviour(db, "ws", "s1")).toBeUndefined();
    expect(cachedBehaviour(db, "ws", "s0")?.version).toBe("2");
    expect(cachedBehaviour(db, "ws", "s2")).toBeDefined();
    expect(cachedBehaviour(db, "ws", "new")).toBeDefined();
  });
});

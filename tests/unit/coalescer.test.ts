/** Group commit for the hot path (server/ingest/coalescer.ts): what shares a batch, and what never does. */
import { describe, expect, it } from "vitest";
import { Coalescer } from "@/server/ingest/coalescer";

/** A run function that records its batches and answers when released. */
function recorder<I>(answer: (item: I) => unknown = (i) => i) {
  const batches: I[][] = [];
  const releases: (() => void)[] = [];
  const run = (items: I[]) =>
    new Promise<unknown[]>((resolve, reject) => {
      batches.push(items);
      releases.push(() => {
        try {
          resolve(items.map(answer));
        } catch (err) {
          reject(err);
        }
      });
    });
  const releaseAll = async () => {
    while (releases.length) releases.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { batches, run, releaseAll };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("Coalescer", () => {
  it("sends what arrives in one turn as one batch, and what arrives meanwhile as the next", async () => {
    const r = recorder<number>((i) => i * 10);
    const c = new Coalescer<number, number>({ run: r.run as never, maxInFlight: 1, maxBatch: 64 });
    const first = [1, 2, 3].map((i) => c.submit(i));
    await turn();
    expect(r.batches).toEqual([[1, 2, 3]]);
    const second = [4, 5].map((i) => c.submit(i));
    await turn();
    expect(r.batches).toHaveLength(1); // one in flight: 4 and 5 wait for it
    await r.releaseAll();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    expect(r.batches).toEqual([[1, 2, 3], [4, 5]]);
    await r.releaseAll();
    expect(await Promise.all(second)).toEqual([40, 50]);
  });

  it("a lone request goes at once, alone (no waiting for a batch to fill)", async () => {
    const r = recorder<string>();
    const c = new Coalescer<string, string>({ run: r.run as never, maxInFlight: 2, maxBatch: 64 });
    const a = c.submit("a");
    await turn();
    expect(r.batches).toEqual([["a"]]);
    const b = c.submit("b");
    await turn();
    expect(r.batches).toEqual([["a"], ["b"]]); // a second slot is free: no wait for the first
    await r.releaseAll();
    expect([await a, await b]).toEqual(["a", "b"]);
  });

  it("keeps batches within maxBatch", async () => {
    const r = recorder<number>();
    const c = new Coalescer<number, number>({ run: r.run as never, maxInFlight: 1, maxBatch: 3 });
    const all = Array.from({ length: 7 }, (_, i) => c.submit(i));
    for (let i = 0; i < 3; i++) {
      await turn();
      await r.releaseAll();
    }
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.batches.map((b) => b.length)).toEqual([3, 3, 1]);
  });

  it("items whose keys meet never share a batch; order among them is kept", async () => {
    const r = recorder<{ session: string; n: number }>((i) => i.n);
    const c = new Coalescer<{ session: string; n: number }, number>({ run: r.run as never, maxInFlight: 1, maxBatch: 64, keysOf: (i) => [i.session] });
    const all = [
      { session: "a", n: 1 },
      { session: "b", n: 2 },
      { session: "a", n: 3 },
      { session: "c", n: 4 },
      { session: "a", n: 5 },
    ].map((i) => c.submit(i));
    for (let i = 0; i < 3; i++) {
      await turn();
      await r.releaseAll();
    }
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5]);
    expect(r.batches.map((b) => b.map((i) => i.n))).toEqual([[1, 2, 4], [3], [5]]);
  });

  it("a batch that fails runs its items one by one: each gets its own answer or error", async () => {
    const batches: number[][] = [];
    const c = new Coalescer<number, number>({
      maxInFlight: 1,
      maxBatch: 64,
      run: async (items) => {
        batches.push(items);
        if (items.includes(13)) throw Object.assign(new Error("duplicate key"), { code: "23505" });
        return items.map((i) => i + 1);
      },
    });
    const results = await Promise.allSettled([1, 13, 2].map((i) => c.submit(i)));
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([2, "duplicate key", 3]);
    expect(batches).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it("never has more than maxInFlight batches on their way", async () => {
    let running = 0;
    let most = 0;
    const c = new Coalescer<number, number>({
      maxInFlight: 2,
      maxBatch: 2,
      run: async (items) => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 2));
        running--;
        return items;
      },
    });
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => c.submit(i)));
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(2);
  });
});

describe("Coalescer fillWhileBusy", () => {
  const fill = { maxWaitMs: 40 };

  /** Four clients in two batches of two, the first answered: its two clients are expected back. */
  async function fourClientsFirstAnswered() {
    const batches: string[][] = [];
    const answers: (() => void)[] = [];
    const run = (items: string[]) =>
      new Promise<string[]>((resolve) => {
        batches.push(items);
        answers.push(() => resolve(items));
      });
    const c = new Coalescer<string, string>({ run, maxInFlight: 2, maxBatch: 4, fillWhileBusy: fill });
    const first = [c.submit("a"), c.submit("b")];
    await turn();
    const second = [c.submit("c"), c.submit("d")];
    await turn();
    expect(batches).toEqual([["a", "b"], ["c", "d"]]); // nothing in flight for "a", "b"; "c", "d" are their share
    answers[0]();
    await Promise.all(first);
    await turn();
    return { c, batches, answers, second };
  }

  it("with four clients, a client answered waits beside the batch in flight for the other client of its batch", async () => {
    const { c, batches, answers, second } = await fourClientsFirstAnswered();
    const a2 = c.submit("a2");
    await turn();
    expect(batches).toHaveLength(2); // a slot is free, but "a2" waits for "b2"
    const b2 = c.submit("b2");
    await turn();
    expect(batches).toEqual([["a", "b"], ["c", "d"], ["a2", "b2"]]);
    answers[1]();
    answers[2]();
    expect([await a2, await b2, ...(await Promise.all(second))]).toEqual(["a2", "b2", "c", "d"]);
  });

  it("a client waits for its share no longer than maxWaitMs", async () => {
    const { c, batches, answers } = await fourClientsFirstAnswered();
    const t0 = performance.now();
    const a2 = c.submit("a2");
    while (batches.length < 3) await new Promise((res) => setTimeout(res, 2));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(fill.maxWaitMs - 2);
    expect(batches[2]).toEqual(["a2"]);
    answers[1]();
    answers[2]();
    expect(await a2).toBe("a2");
  });

  it("a client goes at once when the batch in flight comes back first", async () => {
    const { c, batches, answers } = await fourClientsFirstAnswered();
    const a2 = c.submit("a2");
    await turn();
    expect(batches).toHaveLength(2);
    answers[1](); // "c", "d" answered: nothing in flight, "a2" goes without its wait
    await new Promise((res) => setTimeout(res, 1));
    expect(batches[2]).toEqual(["a2"]);
    answers[2]();
    expect(await a2).toBe("a2");
  });

  it("two clients never wait for each other: each goes beside the other's batch at once", async () => {
    const r = recorder<string>();
    const c = new Coalescer<string, string>({ run: r.run as never, maxInFlight: 2, maxBatch: 4, fillWhileBusy: { maxWaitMs: 60_000 } });
    void c.submit("a");
    await turn();
    void c.submit("b");
    await turn();
    expect(r.batches).toEqual([["a"], ["b"]]);
    await r.releaseAll();
  });

  it("clients answered longer than maxWaitMs ago are no longer waited for", async () => {
    const { c, batches, answers } = await fourClientsFirstAnswered();
    await new Promise((res) => setTimeout(res, fill.maxWaitMs + 10)); // "a" and "b" did not come back in time
    const a2 = c.submit("a2");
    await turn();
    expect(batches[2]).toEqual(["a2"]); // no wait: only "c", "d" (on their way) and "a2" count
    answers[1]();
    answers[2]();
    expect(await a2).toBe("a2");
  });
});

describe("VIGIL_GUARD_BATCH_SIZE", () => {
  it("defaults to 64, takes a whole number ≥ 1, and names itself when wrong", async () => {
    const { guardBatchSizeFromEnv } = await import("@/server/ingest/guard-lean");
    expect(guardBatchSizeFromEnv(undefined)).toBe(64);
    expect(guardBatchSizeFromEnv(" ")).toBe(64);
    expect(guardBatchSizeFromEnv("1")).toBe(1);
    for (const bad of ["0", "-3", "2.5", "lots"]) expect(() => guardBatchSizeFromEnv(bad)).toThrow(/VIGIL_GUARD_BATCH_SIZE/);
  });
});

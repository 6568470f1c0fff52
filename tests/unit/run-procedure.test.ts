/**
 * runProcedure (server/trpc/run-procedure.ts) must behave as tRPC's own procedure caller: the same
 * data, the same errors, the same context and input seen by every layer. Each case runs both and
 * compares what the procedure recorded and returned.
 */
import { describe, expect, it } from "vitest";
import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import type { AnyProcedure } from "@trpc/server/unstable-core-do-not-import";
import { runProcedure } from "@/server/trpc/run-procedure";

interface Ctx {
  seen: unknown[];
  base: string;
}
const t = initTRPC.context<Ctx>().create();

/** Runs `procedure` through tRPC's caller and through runProcedure; returns both outcomes. */
async function both(procedure: unknown, rawInput: unknown) {
  const outcomes = [];
  for (const run of [(p: AnyProcedure, o: never) => p(o), runProcedure]) {
    const ctx: Ctx = { seen: [], base: "b" };
    const opts = { path: "p", getRawInput: async () => rawInput, ctx, type: "mutation", signal: undefined, batchIndex: 0 } as never;
    try {
      outcomes.push({ data: await run(procedure as AnyProcedure, opts), seen: ctx.seen });
    } catch (err) {
      const e = err as TRPCError;
      outcomes.push({ error: { name: e.name, code: e.code, message: e.message, cause: (e.cause as Error | undefined)?.message }, seen: ctx.seen });
    }
  }
  return outcomes;
}

const layered = t.procedure
  .meta({ tag: "m" } as never)
  .use(async ({ ctx, meta, path, type, next }) => {
    ctx.seen.push({ layer: 1, meta, path, type });
    const r = await next({ ctx: { user: "u1" } });
    ctx.seen.push({ layer: 1, after: r.ok });
    return r;
  })
  .use(async ({ ctx, next }) => {
    ctx.seen.push({ layer: 2, ctx: { base: ctx.base, user: ctx.user } });
    return next({ ctx: { user: "u2", extra: 1 } });
  })
  .input(z.object({ n: z.number() }))
  .use(async ({ ctx, input, next }) => {
    ctx.seen.push({ layer: 3, input });
    return next({ input: { n: input.n * 10 } });
  })
  .mutation(({ ctx, input }) => {
    if (input.n === 70) throw new Error("seven");
    return { user: ctx.user, extra: ctx.extra, base: ctx.base, n: input.n };
  });

describe("runProcedure", () => {
  it("returns what tRPC's caller returns, with the same merged context and input", async () => {
    const [trpc, native] = await both(layered, { n: 4 });
    expect(trpc).toEqual({ data: { user: "u2", extra: 1, base: "b", n: 40 }, seen: expect.any(Array) });
    expect(native).toEqual(trpc);
  });

  it("input validation failure: the same BAD_REQUEST", async () => {
    const [trpc, native] = await both(layered, { n: "x" });
    expect(trpc.error?.code).toBe("BAD_REQUEST");
    expect(native).toEqual(trpc);
  });

  it("an error in the resolver reaches the caller as the same TRPCError, outer layers seeing a failed result", async () => {
    const [trpc, native] = await both(layered, { n: 7 });
    expect(trpc.error).toMatchObject({ code: "INTERNAL_SERVER_ERROR", message: "seven" });
    expect(trpc.seen).toContainEqual({ layer: 1, after: false });
    expect(native).toEqual(trpc);
  });

  it("a middleware that throws, and one that never calls next", async () => {
    const throwing = t.procedure.use(async () => {
      throw new TRPCError({ code: "UNAUTHORIZED", message: "no key" });
    }).mutation(() => 1);
    const [a, b] = await both(throwing, {});
    expect(a.error).toMatchObject({ code: "UNAUTHORIZED", message: "no key" });
    expect(b).toEqual(a);

    const silent = t.procedure.use((async () => undefined) as never).mutation(() => 1);
    const [c, d] = await both(silent, {});
    expect(c.error?.code).toBe("INTERNAL_SERVER_ERROR");
    expect(d).toEqual(c);
  });

  it("next({ getRawInput }) replaces the raw input for the layers below", async () => {
    const swapped = t.procedure
      .use(async ({ next }) => next({ getRawInput: async () => ({ n: 2 }) }))
      .input(z.object({ n: z.number() }))
      .mutation(({ input }) => input.n);
    const [a, b] = await both(swapped, { n: 1 });
    expect(a).toEqual({ data: 2, seen: [] });
    expect(b).toEqual(a);
  });
});

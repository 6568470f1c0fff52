/**
 * The set-up most integration suites share: a TestApp on a new database of one kind for the tests
 * of a describe block, and the ingest call that must succeed. Kept apart from app.ts, which the
 * bench imports outside vitest.
 */
import { afterAll, beforeAll, expect } from "vitest";
import { TestApp } from "./app";
import { createTestDatabase, type DatabaseKind } from "./databases";

/**
 * A TestApp on a new database of `kind`, opened before the block's tests (beforeAll) and closed
 * after them (afterAll). Call it in the describe block and use the result as the app inside hooks
 * and tests — it stands for the app of the running block (reading it outside them throws).
 * `beforeAll` hooks registered after this call see the app open.
 */
export function useTestApp(kind: DatabaseKind, options: { migratedUpTo?: string } = {}): TestApp {
  let current: TestApp | null = null;
  beforeAll(async () => {
    current = await TestApp.create(await createTestDatabase(kind, options));
  });
  afterAll(async () => {
    await current?.database.close();
    current = null;
  });
  return new Proxy({} as TestApp, {
    get(_, property) {
      if (!current) throw new Error(`useTestApp(${kind}): the app is open only inside the block's hooks and tests`);
      const value: unknown = Reflect.get(current, property, current);
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
}

/** What ingest.events answers an accepted batch. */
export interface IngestAnswer {
  accepted: number;
  duplicates: number;
  /** Effects vary by type; tests read the fields they assert on. */
  effects: any[];
}

/** Sends a batch with `key` and expects it accepted (200; the body in the failure message). */
export async function ingestAccepted(app: TestApp, key: string, events: unknown[]): Promise<IngestAnswer> {
  const res = await app.mutation("ingest.events", { events }, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.result!.data as IngestAnswer;
}

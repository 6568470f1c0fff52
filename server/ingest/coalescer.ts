/**
 * Group commit for the hot path. guard.check is one small read and one small write per tool call;
 * with a fleet, most of their cost is per statement (a socket write each way, parse/bind/execute,
 * a commit and its WAL flush), not per row. A coalescer gathers the requests of one kind that
 * arrive while earlier ones are on their way to the database and sends them as one statement.
 *
 * Nothing waits for a batch to fill: a request arriving when a slot is free goes with whatever
 * arrived in the same turn of the event loop, so one client sees no added latency and batches
 * grow only as fast as the load does.
 */
import { perDatabase, type Db } from "@/db/client";

export interface CoalescerOptions<I, O> {
  /** Runs a batch; answers in the order of the items. */
  run: (items: I[]) => Promise<O[]>;
  /** Batches on their way at once. */
  maxInFlight: number;
  /** Items per batch. */
  maxBatch: number;
  /**
   * Items whose keys meet in one batch wait for the next one (two writes of one session in one
   * statement would see the same row version, and one of them would silently win).
   */
  keysOf?: (item: I) => readonly string[];
  /**
   * While another batch is on its way, a batch waits up to `maxWaitMs` for its share of the clients
   * (default: no wait). Where most of a batch's cost is per batch, a batch of one started beside
   * another costs nearly as much as a full one; clients answered together send their next requests
   * within a moment of each other, and those should go as one. The clients are counted as the items
   * on their way, queued, and answered in the last `maxWaitMs` and not yet back (each item submitted
   * is taken for one of those); a batch waits while it holds fewer than its share of them (`maxInFlight`
   * batches share them, rounded down). So two or three clients never wait for each other, four go in
   * twos, eight in fours, and uneven batches even out. A lone client never waits: with nothing in
   * flight a batch goes at once.
   */
  fillWhileBusy?: { maxWaitMs: number };
}

interface Pending<I, O> {
  item: I;
  /** performance.now() when it was submitted. */
  at: number;
  resolve: (value: O) => void;
  reject: (reason: unknown) => void;
}

export class Coalescer<I, O> {
  private queue: Pending<I, O>[] = [];
  private inFlight = 0;
  /** Items in the batches on their way. */
  private inFlightItems = 0;
  /** When the items expected back were answered, oldest first (fillWhileBusy). */
  private expected: number[] = [];
  private scheduled = false;
  private fillTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: CoalescerOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const at = performance.now();
      this.queue.push({ item, at, resolve, reject });
      if (this.options.fillWhileBusy) {
        this.forgetExpected(at);
        this.expected.shift(); // one of the clients expected, most likely
      }
      this.schedule();
    });
  }

  /** After the current turn of the event loop, so requests parsed in the same turn share a batch. */
  private schedule() {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump() {
    while (this.inFlight < this.options.maxInFlight && this.queue.length) {
      if (this.waitingToFill()) return;
      const batch = this.take();
      this.inFlight++;
      this.inFlightItems += batch.length;
      void this.runBatch(batch).finally(() => {
        this.inFlight--;
        this.inFlightItems -= batch.length;
        if (this.options.fillWhileBusy) this.expectBack(batch.length);
        this.pump();
      });
    }
  }

  /** The clients of a batch just answered are expected to send again (fillWhileBusy). */
  private expectBack(items: number) {
    const now = performance.now();
    for (let i = 0; i < items; i++) this.expected.push(now);
    // Bounded: only the next few batches' worth matters.
    if (this.expected.length > 4 * this.options.maxBatch) this.expected.splice(0, this.expected.length - 4 * this.options.maxBatch);
  }

  /** Expectations older than the wait are dropped: those clients are not sending soon. */
  private forgetExpected(now: number) {
    const wait = this.options.fillWhileBusy!.maxWaitMs;
    let stale = 0;
    while (stale < this.expected.length && now - this.expected[stale] > wait) stale++;
    if (stale) this.expected.splice(0, stale);
  }

  /** True (and a pump is due when the wait is over) while a batch should wait for more items (fillWhileBusy). */
  private waitingToFill(): boolean {
    const fill = this.options.fillWhileBusy;
    if (!fill || this.inFlight === 0 || this.queue.length >= this.options.maxBatch) return false;
    const now = performance.now();
    this.forgetExpected(now);
    const clients = this.inFlightItems + this.queue.length + this.expected.length;
    if (this.queue.length >= Math.floor(clients / this.options.maxInFlight)) return false;
    const left = this.queue[0].at + fill.maxWaitMs - now;
    if (left <= 0) return false;
    if (!this.fillTimer)
      this.fillTimer = setTimeout(() => {
        this.fillTimer = null;
        this.pump();
      }, Math.ceil(left));
    return true;
  }

  private take(): Pending<I, O>[] {
    const { maxBatch, keysOf } = this.options;
    if (!keysOf) return this.queue.splice(0, maxBatch);
    const taken: Pending<I, O>[] = [];
    const left: Pending<I, O>[] = [];
    const seen = new Set<string>();
    for (const p of this.queue) {
      const keys = keysOf(p.item);
      if (taken.length >= maxBatch || keys.some((k) => seen.has(k))) {
        left.push(p);
        continue;
      }
      for (const k of keys) seen.add(k);
      taken.push(p);
    }
    this.queue = left;
    return taken;
  }

  private async runBatch(batch: Pending<I, O>[]) {
    try {
      const out = await this.options.run(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(out[i]));
    } catch (err) {
      if (batch.length === 1) return batch[0].reject(err);
      // One item can fail the statement for all (a unique violation from a concurrent retry of the
      // same event): each runs alone, and gets its own answer or error.
      await Promise.all(
        batch.map(async (p) => {
          try {
            p.resolve((await this.options.run([p.item]))[0]);
          } catch (e) {
            p.reject(e);
          }
        }),
      );
    }
  }
}

/** One coalescer per database and name (e.g. the workspace): instances of the app each have their own. */
export function coalescerFor<I, O>(owners: WeakMap<object, Map<string, Coalescer<I, O>>>, db: Db, name: string, make: () => Coalescer<I, O>): Coalescer<I, O> {
  const byName = perDatabase(owners, db, () => new Map<string, Coalescer<I, O>>());
  let c = byName.get(name);
  if (!c) {
    if (byName.size > 10_000) byName.clear(); // bounded, like the configuration cache
    byName.set(name, (c = make()));
  }
  return c;
}

-- No statistics on the event log's payload: nothing reads it in SQL by value (only whole, by key),
-- yet sampling it was most of what analyzing the event log cost — on PGlite, where Vigil analyzes
-- in the server's own thread, 73 → 21 ms for a day's partition and 70 → 27 ms for the parent's
-- sample at 20,000 events; on a server, half of autovacuum's analyze of a partition. Reaches the
-- partitions that exist; those created later are set by ensureEventPartitions (a new partition
-- starts at the default). Citus takes no such ALTER on a distributed table: an event log that is
-- distributed already keeps the default (a new database is distributed after its migrations).
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    ALTER TABLE "event" ALTER COLUMN "payload" SET STATISTICS 0;
  ELSIF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'event'::regclass) THEN
    ALTER TABLE "event" ALTER COLUMN "payload" SET STATISTICS 0;
  END IF;
END $$;

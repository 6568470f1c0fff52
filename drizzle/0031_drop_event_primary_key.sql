-- The event log's own key (workspace_id, id, ts) repeated event_id's idempotency at ~150 bytes and an index write per event: rows are found by (workspace_id, ts).
ALTER TABLE "event" DROP CONSTRAINT "event_workspace_id_id_ts_pk";--> statement-breakpoint
-- Without a key, logical replication (Citus's online shard moves, CDC) needs the whole row as the replica identity of every partition; new partitions get it from server/services/partitions.ts.
ALTER TABLE "event" REPLICA IDENTITY FULL;--> statement-breakpoint
DO $$
DECLARE p regclass;
BEGIN
  FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'event'::regclass LOOP
    EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', p);
  END LOOP;
END $$;

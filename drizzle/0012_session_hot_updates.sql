-- Every guard.check and ingest batch of a session rewrites its row (~2.5 KB of behaviour state), and
-- every batch rewrites the trust states it touched. Those updates were almost never HOT (a new index
-- entry in every index, the row moved to another page): `last_event_at` was indexed and changes every
-- time, and the pages were full. Now the sessions' index is on the event's minute (a stored column
-- that changes once a minute), both tables' pages keep room for a new version (fillfactor 70; it
-- applies to pages filled from now on), and the behaviour document is compressed with lz4 where the
-- server has it (PGlite has only pglz), a fraction of pglz's cost per update. The index is in the
-- sessions list's order (newest first, never-active last), so the list's first page is an index scan.
DROP INDEX "session_ws_last_event_idx";--> statement-breakpoint
ALTER TABLE "agent_session" ADD COLUMN "active_minute" bigint GENERATED ALWAYS AS (clock / 60000) STORED;--> statement-breakpoint
CREATE INDEX "session_ws_active_minute_idx" ON "agent_session" USING btree ("workspace_id","active_minute" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "agent_session" SET (fillfactor = 70);--> statement-breakpoint
ALTER TABLE "key_state" SET (fillfactor = 70);--> statement-breakpoint
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE "agent_session" ALTER COLUMN "behaviour" SET COMPRESSION lz4;
  END IF;
END $$;
